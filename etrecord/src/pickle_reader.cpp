// Pickle subset interpreter. Why a stack machine of inert objects: torch.save pickles describe
// tensors as calls (`_rebuild_tensor_v2(storage, offset, size, stride, ...)`); we record those
// calls as data instead of executing anything, so a hostile pickle can at worst be refused.
#include "etscope/etrecord/pickle_reader.h"

#include <charconv>
#include <cstring>
#include <unordered_map>

#include "etscope/core/checked.h"

namespace etscope::etrecord {
namespace {

struct StorageName {
  const char* name;
  ScalarType type;
};
constexpr StorageName kStorages[] = {
    {"FloatStorage", ScalarType::kFloat},      {"DoubleStorage", ScalarType::kDouble},
    {"HalfStorage", ScalarType::kHalf},        {"BFloat16Storage", ScalarType::kBFloat16},
    {"LongStorage", ScalarType::kLong},        {"IntStorage", ScalarType::kInt},
    {"ShortStorage", ScalarType::kShort},      {"CharStorage", ScalarType::kChar},
    {"ByteStorage", ScalarType::kByte},        {"BoolStorage", ScalarType::kBool},
    {"ComplexHalfStorage", ScalarType::kComplexHalf},
    {"ComplexFloatStorage", ScalarType::kComplexFloat},
    {"ComplexDoubleStorage", ScalarType::kComplexDouble},
    {"QInt8Storage", ScalarType::kQInt8},      {"QUInt8Storage", ScalarType::kQUInt8},
    {"QInt32Storage", ScalarType::kQInt32},    {"QUInt4x2Storage", ScalarType::kQUInt4x2},
    {"QUInt2x4Storage", ScalarType::kQUInt2x4}, {"UInt16Storage", ScalarType::kUInt16},
    {"UInt32Storage", ScalarType::kUInt32},    {"UInt64Storage", ScalarType::kUInt64},
    {"Float8_e5m2Storage", ScalarType::kFloat8e5m2},
    {"Float8_e4m3fnStorage", ScalarType::kFloat8e4m3fn},
    {"Float8_e5m2fnuzStorage", ScalarType::kFloat8e5m2fnuz},
    {"Float8_e4m3fnuzStorage", ScalarType::kFloat8e4m3fnuz},
    {"UntypedStorage", ScalarType::kByte},
};

// Reads the file-provided bytes with bounds checks; every failure is "truncated".
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool done() const { return pos_ >= bytes_.size(); }
  size_t pos() const { return pos_; }
  bool take(uint64_t n, std::span<const uint8_t>* out) {
    auto s = checked::slice(bytes_, pos_, n);
    if (!s) return false;
    *out = *s;
    pos_ += static_cast<size_t>(n);
    return true;
  }
  bool u8(uint8_t* v) {
    std::span<const uint8_t> s;
    if (!take(1, &s)) return false;
    *v = s[0];
    return true;
  }
  bool uint_le(size_t n, uint64_t* v) {
    std::span<const uint8_t> s;
    if (!take(n, &s)) return false;
    uint64_t r = 0;
    for (size_t i = 0; i < n; ++i) r |= static_cast<uint64_t>(s[i]) << (8 * i);
    *v = r;
    return true;
  }
  // A text line up to (not including) '\n'.
  bool line(std::string* out) {
    for (size_t i = pos_; i < bytes_.size(); ++i) {
      if (bytes_[i] == '\n') {
        out->assign(reinterpret_cast<const char*>(bytes_.data() + pos_), i - pos_);
        pos_ = i + 1;
        return true;
      }
    }
    return false;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

std::string hex_byte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

}  // namespace

std::optional<ScalarType> storage_class_dtype(const std::string& qualified_name) {
  constexpr std::string_view kPrefix = "torch.";
  if (qualified_name.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  std::string_view rest = std::string_view(qualified_name).substr(kPrefix.size());
  for (const auto& s : kStorages) {
    if (rest == s.name) return s.type;
  }
  return std::nullopt;
}

PyObject* Unpickler::make(PyKind kind) {
  arena_.push_back(std::make_unique<PyObject>());
  arena_.back()->kind = kind;
  return arena_.back().get();
}

Result<PyObject*> Unpickler::load(std::span<const uint8_t> bytes, const std::string& where) {
  Cursor in(bytes);
  std::vector<PyObject*> stack;
  std::vector<size_t> marks;
  std::unordered_map<uint64_t, PyObject*> memo;
  uint64_t ops = 0;
  size_t op_pos = 0;
  uint8_t op = 0;

  auto fail = [&](ErrorCode code, const std::string& what) {
    return Error(code, where + ": pickle opcode " + hex_byte(op) + " at byte " + std::to_string(op_pos) + ": " + what);
  };
  auto truncated = [&]() { return fail(ErrorCode::kTruncated, "pickle ends early"); };
  auto pop = [&](PyObject** out) {
    size_t floor = marks.empty() ? 0 : marks.back();
    if (stack.size() <= floor) return false;
    *out = stack.back();
    stack.pop_back();
    return true;
  };
  // Pops everything down to the last mark.
  auto pop_mark = [&](std::vector<PyObject*>* out) {
    if (marks.empty()) return false;
    size_t m = marks.back();
    marks.pop_back();
    out->assign(stack.begin() + static_cast<std::ptrdiff_t>(m), stack.end());
    stack.resize(m);
    return true;
  };
  auto top = [&]() -> PyObject* {
    size_t floor = marks.empty() ? 0 : marks.back();
    return stack.size() > floor ? stack.back() : nullptr;
  };
  auto push_int = [&](int64_t v) {
    PyObject* o = make(PyKind::kInt);
    o->integer = v;
    stack.push_back(o);
  };
  auto push_text = [&](PyKind kind, uint64_t n) -> bool {
    std::span<const uint8_t> s;
    if (!in.take(n, &s)) return false;
    PyObject* o = make(kind);
    o->text.assign(reinterpret_cast<const char*>(s.data()), s.size());
    stack.push_back(o);
    return true;
  };
  auto make_global = [&](std::string module, const std::string& name) {
    PyObject* g = make(PyKind::kGlobal);
    g->text = std::move(module) + "." + name;
    return g;
  };
  auto as_int_list = [](const PyObject* o, std::vector<int64_t>* out) {
    if (o == nullptr || (o->kind != PyKind::kTuple && o->kind != PyKind::kList)) return false;
    out->clear();
    for (const PyObject* i : o->items) {
      if (i->kind != PyKind::kInt) return false;
      out->push_back(i->integer);
    }
    return true;
  };

  while (true) {
    if (++ops > limits_.max_pickle_ops) {
      return Error(ErrorCode::kOutOfResources,
                   where + ": pickle runs more than " + std::to_string(limits_.max_pickle_ops) + " opcodes");
    }
    op_pos = in.pos();
    if (!in.u8(&op)) return Error(ErrorCode::kTruncated, where + ": pickle ends without STOP");
    PyObject* a = nullptr;
    PyObject* b = nullptr;
    uint64_t n = 0;
    switch (op) {
      case 0x80:  // PROTO
        if (!in.uint_le(1, &n)) return truncated();
        if (n > 5) return fail(ErrorCode::kNotSupported, "pickle protocol " + std::to_string(n));
        break;
      case 0x95:  // FRAME: a length hint only
        if (!in.uint_le(8, &n)) return truncated();
        break;
      case '.': {  // STOP
        PyObject* result = nullptr;
        if (!marks.empty() || !pop(&result)) return fail(ErrorCode::kCorrupt, "STOP with an unbalanced stack");
        return result;
      }
      case '(':
        if (marks.size() >= limits_.max_pickle_depth) {
          return Error(ErrorCode::kOutOfResources, where + ": pickle nests deeper than " +
                                                       std::to_string(limits_.max_pickle_depth) + " marks");
        }
        marks.push_back(stack.size());
        break;
      case '0':
        if (!pop(&a)) return fail(ErrorCode::kCorrupt, "stack underflow");
        break;
      case '1': {
        std::vector<PyObject*> dropped;
        if (!pop_mark(&dropped)) return fail(ErrorCode::kCorrupt, "no mark");
        break;
      }
      case '2':
        if ((a = top()) == nullptr) return fail(ErrorCode::kCorrupt, "stack underflow");
        stack.push_back(a);
        break;
      case 'N': stack.push_back(make(PyKind::kNone)); break;
      case 0x88:
      case 0x89: {
        PyObject* o = make(PyKind::kBool);
        o->boolean = op == 0x88;
        stack.push_back(o);
        break;
      }
      case 'J':
        if (!in.uint_le(4, &n)) return truncated();
        push_int(static_cast<int32_t>(static_cast<uint32_t>(n)));
        break;
      case 'K':
        if (!in.uint_le(1, &n)) return truncated();
        push_int(static_cast<int64_t>(n));
        break;
      case 'M':
        if (!in.uint_le(2, &n)) return truncated();
        push_int(static_cast<int64_t>(n));
        break;
      case 0x8a: {  // LONG1: little-endian two's complement of n bytes
        if (!in.uint_le(1, &n)) return truncated();
        if (n > 8) return fail(ErrorCode::kNotSupported, "integer wider than 64 bits");
        uint64_t v = 0;
        if (n > 0 && !in.uint_le(static_cast<size_t>(n), &v)) return truncated();
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
        push_int(static_cast<int64_t>(v));
        break;
      }
      case 'I':
      case 'L': {  // INT / LONG as text
        std::string line;
        if (!in.line(&line)) return truncated();
        if (!line.empty() && line.back() == 'L') line.pop_back();
        if (line == "00" || line == "01") {
          PyObject* o = make(PyKind::kBool);
          o->boolean = line == "01";
          stack.push_back(o);
          break;
        }
        int64_t v = 0;
        auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
        if (ec != std::errc() || p != line.data() + line.size()) return fail(ErrorCode::kCorrupt, "bad integer text");
        push_int(v);
        break;
      }
      case 'G': {  // BINFLOAT: big-endian double
        std::span<const uint8_t> s;
        if (!in.take(8, &s)) return truncated();
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = bits << 8 | s[static_cast<size_t>(i)];
        PyObject* o = make(PyKind::kFloat);
        std::memcpy(&o->real, &bits, sizeof bits);
        stack.push_back(o);
        break;
      }
      case 'X':  // BINUNICODE
        if (!in.uint_le(4, &n) || !push_text(PyKind::kStr, n)) return truncated();
        break;
      case 0x8c:  // SHORT_BINUNICODE
        if (!in.uint_le(1, &n) || !push_text(PyKind::kStr, n)) return truncated();
        break;
      case 0x8d:  // BINUNICODE8
        if (!in.uint_le(8, &n) || !push_text(PyKind::kStr, n)) return truncated();
        break;
      case 'T':  // BINSTRING (Python 2 str)
        if (!in.uint_le(4, &n) || !push_text(PyKind::kStr, n)) return truncated();
        break;
      case 'U':  // SHORT_BINSTRING
        if (!in.uint_le(1, &n) || !push_text(PyKind::kStr, n)) return truncated();
        break;
      case 'B':  // BINBYTES
        if (!in.uint_le(4, &n) || !push_text(PyKind::kBytes, n)) return truncated();
        break;
      case 'C':  // SHORT_BINBYTES
        if (!in.uint_le(1, &n) || !push_text(PyKind::kBytes, n)) return truncated();
        break;
      case 0x8e:  // BINBYTES8
        if (!in.uint_le(8, &n) || !push_text(PyKind::kBytes, n)) return truncated();
        break;
      case '}': stack.push_back(make(PyKind::kDict)); break;
      case ']': stack.push_back(make(PyKind::kList)); break;
      case ')': stack.push_back(make(PyKind::kTuple)); break;
      case 0x8f: stack.push_back(make(PyKind::kSet)); break;
      case 0x85:
      case 0x86:
      case 0x87: {
        size_t count = static_cast<size_t>(op - 0x84);
        size_t floor = marks.empty() ? 0 : marks.back();
        if (stack.size() < floor + count) return fail(ErrorCode::kCorrupt, "stack underflow");
        PyObject* t = make(PyKind::kTuple);
        t->items.assign(stack.end() - static_cast<std::ptrdiff_t>(count), stack.end());
        stack.resize(stack.size() - count);
        stack.push_back(t);
        break;
      }
      case 't':
      case 'l':
      case 0x91: {  // TUPLE, LIST, FROZENSET
        std::vector<PyObject*> items;
        if (!pop_mark(&items)) return fail(ErrorCode::kCorrupt, "no mark");
        PyObject* t = make(op == 't' ? PyKind::kTuple : op == 'l' ? PyKind::kList : PyKind::kSet);
        t->items = std::move(items);
        stack.push_back(t);
        break;
      }
      case 'd': {
        std::vector<PyObject*> items;
        if (!pop_mark(&items) || items.size() % 2 != 0) return fail(ErrorCode::kCorrupt, "bad DICT");
        PyObject* d = make(PyKind::kDict);
        for (size_t i = 0; i < items.size(); i += 2) d->entries.emplace_back(items[i], items[i + 1]);
        stack.push_back(d);
        break;
      }
      case 'a': {
        if (!pop(&a) || (b = top()) == nullptr || b->kind != PyKind::kList) return fail(ErrorCode::kCorrupt, "APPEND to a non-list");
        b->items.push_back(a);
        break;
      }
      case 'e':
      case 0x90: {  // APPENDS, ADDITEMS
        std::vector<PyObject*> items;
        if (!pop_mark(&items) || (b = top()) == nullptr ||
            b->kind != (op == 'e' ? PyKind::kList : PyKind::kSet)) {
          return fail(ErrorCode::kCorrupt, "APPENDS to a non-list");
        }
        b->items.insert(b->items.end(), items.begin(), items.end());
        break;
      }
      case 's': {
        PyObject* value = nullptr;
        PyObject* key = nullptr;
        if (!pop(&value) || !pop(&key) || (b = top()) == nullptr || b->kind != PyKind::kDict) {
          return fail(ErrorCode::kCorrupt, "SETITEM on a non-dict");
        }
        b->entries.emplace_back(key, value);
        break;
      }
      case 'u': {
        std::vector<PyObject*> items;
        if (!pop_mark(&items) || items.size() % 2 != 0 || (b = top()) == nullptr || b->kind != PyKind::kDict) {
          return fail(ErrorCode::kCorrupt, "SETITEMS on a non-dict");
        }
        for (size_t i = 0; i < items.size(); i += 2) b->entries.emplace_back(items[i], items[i + 1]);
        break;
      }
      case 'q':
      case 'r':
      case 0x94:
      case 'p': {  // BINPUT, LONG_BINPUT, MEMOIZE, PUT
        if (op == 'q' && !in.uint_le(1, &n)) return truncated();
        if (op == 'r' && !in.uint_le(4, &n)) return truncated();
        if (op == 0x94) n = memo.size();
        if (op == 'p') {
          std::string line;
          if (!in.line(&line)) return truncated();
          auto v = std::from_chars(line.data(), line.data() + line.size(), n);
          if (v.ec != std::errc()) return fail(ErrorCode::kCorrupt, "bad PUT index");
        }
        if ((a = top()) == nullptr) return fail(ErrorCode::kCorrupt, "memoize with an empty stack");
        memo[n] = a;
        break;
      }
      case 'h':
      case 'j':
      case 'g': {  // BINGET, LONG_BINGET, GET
        if (op == 'h' && !in.uint_le(1, &n)) return truncated();
        if (op == 'j' && !in.uint_le(4, &n)) return truncated();
        if (op == 'g') {
          std::string line;
          if (!in.line(&line)) return truncated();
          auto v = std::from_chars(line.data(), line.data() + line.size(), n);
          if (v.ec != std::errc()) return fail(ErrorCode::kCorrupt, "bad GET index");
        }
        auto it = memo.find(n);
        if (it == memo.end()) return fail(ErrorCode::kCorrupt, "memo key " + std::to_string(n) + " not defined");
        stack.push_back(it->second);
        break;
      }
      case 'c': {  // GLOBAL "module\nname\n"
        std::string module, name;
        if (!in.line(&module) || !in.line(&name)) return truncated();
        stack.push_back(make_global(std::move(module), name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        if (!pop(&b) || !pop(&a) || a->kind != PyKind::kStr || b->kind != PyKind::kStr) {
          return fail(ErrorCode::kCorrupt, "STACK_GLOBAL needs two strings");
        }
        stack.push_back(make_global(a->text, b->text));
        break;
      }
      case 'Q': {  // BINPERSID: ('storage', storage class, key, location, numel)
        if (!pop(&a)) return fail(ErrorCode::kCorrupt, "stack underflow");
        PyObject* s = make(PyKind::kStorage);
        const auto& t = a->items;
        if (a->kind != PyKind::kTuple || t.size() < 5 || t[0]->kind != PyKind::kStr || t[0]->text != "storage" ||
            t[1]->kind != PyKind::kGlobal || t[2]->kind != PyKind::kStr || t[4]->kind != PyKind::kInt) {
          s->kind = PyKind::kObject;
          s->text = "persistent id";
        } else {
          s->dtype = storage_class_dtype(t[1]->text);
          s->text = t[1]->text;
          s->storage_key = t[2]->text;
          s->storage_numel = t[4]->integer;
        }
        stack.push_back(s);
        break;
      }
      case 'R': {  // REDUCE: callable(*args), recorded, never executed
        PyObject* args = nullptr;
        PyObject* callable = nullptr;
        if (!pop(&args) || !pop(&callable)) return fail(ErrorCode::kCorrupt, "stack underflow");
        const std::string fn = callable->kind == PyKind::kGlobal ? callable->text : std::string("?");
        const std::vector<PyObject*> no_args;
        const auto& av = args->kind == PyKind::kTuple ? args->items : no_args;
        PyObject* r = nullptr;
        if ((fn == "torch._utils._rebuild_tensor_v2" || fn == "torch._utils._rebuild_tensor") && av.size() >= 4 &&
            av[0]->kind == PyKind::kStorage && av[1]->kind == PyKind::kInt) {
          r = make(PyKind::kTensor);
          r->storage = av[0];
          r->storage_offset = av[1]->integer;
          if (!as_int_list(av[2], &r->sizes) || !as_int_list(av[3], &r->strides)) {
            return fail(ErrorCode::kCorrupt, "tensor size or stride is not a tuple of integers");
          }
          r->requires_grad = av.size() >= 5 && av[4]->kind == PyKind::kBool && av[4]->boolean;
        } else if ((fn == "torch._utils._rebuild_parameter" || fn == "torch._utils._rebuild_parameter_with_state") &&
                   !av.empty() && av[0]->kind == PyKind::kTensor) {
          r = av[0];
          if (av.size() >= 2 && av[1]->kind == PyKind::kBool) r->requires_grad = av[1]->boolean;
        } else if (fn == "collections.OrderedDict" && av.empty()) {
          r = make(PyKind::kDict);
        } else {
          r = make(PyKind::kObject);
          r->text = fn;
          r->items = av;
        }
        stack.push_back(r);
        break;
      }
      case 0x81: {  // NEWOBJ cls.__new__(cls, *args)
        if (!pop(&b) || !pop(&a)) return fail(ErrorCode::kCorrupt, "stack underflow");
        PyObject* r = make(PyKind::kObject);
        r->text = a->kind == PyKind::kGlobal ? a->text : "?";
        stack.push_back(r);
        break;
      }
      case 0x92: {  // NEWOBJ_EX
        PyObject* kwargs = nullptr;
        if (!pop(&kwargs) || !pop(&b) || !pop(&a)) return fail(ErrorCode::kCorrupt, "stack underflow");
        PyObject* r = make(PyKind::kObject);
        r->text = a->kind == PyKind::kGlobal ? a->text : "?";
        stack.push_back(r);
        break;
      }
      case 'b': {  // BUILD: the state is dropped; objects stay opaque
        if (!pop(&a) || top() == nullptr) return fail(ErrorCode::kCorrupt, "stack underflow");
        break;
      }
      default:
        return fail(ErrorCode::kNotSupported, "opcode not supported by etscope's pickle reader");
    }
    if (stack.size() > limits_.max_pickle_ops) return fail(ErrorCode::kOutOfResources, "pickle stack too large");
  }
}

}  // namespace etscope::etrecord
