// The store's schema: tables, indexes and the documented views (docs/store.md), created or
// migrated step by step inside one locked transaction.
#pragma once

#include <string>

#include "db.h"

namespace etscope::store {

/// Brings the database to kSchemaVersion: creates the schema in an empty database, applies each
/// migration after the stored version, refuses a newer version (a newer etscope wrote it) and a
/// database that holds other tables but no etscope version. Without `create`, a database that
/// holds no store is refused (kNotFound) instead of given one.
Status migrate(Db& db, const std::string& location, bool create);

}  // namespace etscope::store
