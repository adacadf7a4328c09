// etscope train end to end: the binary on training programs exported by the real ExecuTorch,
// its files (curve, plot, weights, trace), resume, and one line with a non-zero exit for every
// kind of bad input.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "etscope/formats/npy.h"
#include "testing/test_util.h"

using etscope::testing::fixture;
using etscope::testing::run_etscope;
using etscope::testing::temp_dir;
using nlohmann::json;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json read_json(const std::string& path) { return json::parse(read_text(path)); }

// The MLP regression program (MSELoss) and its 80 samples: 20 batches of 4.
std::string mlp() {
  return fixture("training/mlp_mse.pte") + " --data " + fixture("training/mlp_mse.data0.npy") + " " +
         fixture("training/mlp_mse.data1.npy");
}

size_t count_lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("etscope train: 20 SGD steps give ExecuTorch's curve with curve and plot and weights and trace files", "[cli][training]") {
  const std::string dir = temp_dir("train_cli_files");
  const json ref = json::parse(read_text(fixture("training/mlp_mse.reference.json")));
  auto r = run_etscope("train " + mlp() + " --steps 20 --lr 0.05 --momentum 0.9 --curve " + dir + "/c.json --plot " + dir +
                       "/c.svg --save " + dir + "/w.ptd --etdump " + dir + "/t.etdp --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["steps"] == 20);
  CHECK(j["batches_per_epoch"] == 20);
  CHECK(j["dropped_samples"] == 0);
  CHECK(j["forward_backward_ms"]["p50"].get<double>() > 0);
  CHECK(j["peak_rss_bytes"].get<uint64_t>() > 0);
  CHECK(j["saved"] == json::array({dir + "/w.ptd"}));

  const json curve = read_json(dir + "/c.json");
  const json& want = ref["runs"]["sgd_b"]["executorch"]["losses"];
  REQUIRE(curve["loss"].size() == 20);
  for (size_t k = 0; k < 20; ++k) CHECK(std::abs(curve["loss"][k].get<double>() - want[k].get<double>()) <= 1e-5);
  CHECK(curve["accuracy"].is_null());  // a regression program: no accuracy
  CHECK(curve["step_ms"].size() == 20);
  CHECK(std::abs(j["final_loss"].get<double>() - want[19].get<double>()) <= 1e-5);
  CHECK_THAT(read_text(dir + "/c.svg"), Catch::Contains("<polyline class=\"loss\""));
  CHECK(std::filesystem::file_size(dir + "/w.ptd") == 1032);
  CHECK(std::filesystem::exists(dir + "/w.optim.ptd"));

  // The trace: one Execute block per step, the optimizer's update as its own event.
  auto ins = run_etscope("inspect --etdump " + dir + "/t.etdp --format json");
  REQUIRE(ins.exit_code == 0);
  const json dump = json::parse(ins.out);
  bool found = false;
  for (const json& block : dump["blocks"]) {
    if (block["name"] != "Execute") continue;
    CHECK(block["runs"].size() == 20);
    for (const json& e : block["events"]) {
      if (e["event_name"] == "Optimizer::step") {
        found = true;
        CHECK(e["perf"]["raw"].size() == 20);
      }
    }
    for (const json& row : block["summary_by_type"]) CHECK(row["type"] != "Optimizer::step");
  }
  CHECK(found);
  // --store keeps the steps (one execution each) and the curve.
  auto stored = run_etscope("train " + mlp() + " --steps 20 --lr 0.05 --momentum 0.9 --store " + dir + "/runs.sqlite --tag exp=a");
  INFO(stored.err);
  REQUIRE(stored.exit_code == 0);
  auto curve_rows = run_etscope("sql \"SELECT count(*), min(loss) FROM v_curves\" --format json --store " + dir + "/runs.sqlite");
  REQUIRE(curve_rows.exit_code == 0);
  CHECK(json::parse(curve_rows.out)[0]["count(*)"] == 20);
  auto stored_runs = run_etscope("runs --format json --store " + dir + "/runs.sqlite");
  REQUIRE(stored_runs.exit_code == 0);
  const json run_row = json::parse(stored_runs.out).at(0);
  CHECK(run_row["source"] == "train");
  CHECK(run_row["executions"] == 20);
  CHECK(run_row["tags"] == "exp=a");
  auto by_type = run_etscope("inspect --etdump " + dir + "/t.etdp --by-type");
  REQUIRE(by_type.exit_code == 0);
  CHECK_THAT(by_type.out, !Catch::Contains("Optimizer::step"));  // shares are of the run time
}

TEST_CASE("etscope train: CSV curve and validation and dropped partial batch and plain progress lines", "[cli][training]") {
  const std::string dir = temp_dir("train_cli_csv");
  // 82 samples: 20 batches of 4 and 2 left over.
  auto extend = [&](const std::string& from, const std::string& to) {
    etscope::NpyArray a = etscope::read_npy(from).value();
    const size_t per = a.data.size() / static_cast<size_t>(a.shape[0]);
    a.data.insert(a.data.end(), a.data.begin(), a.data.begin() + static_cast<long>(2 * per));
    a.shape[0] += 2;
    REQUIRE(etscope::write_npy(to, a.dtype, a.shape, a.data).ok());
  };
  extend(fixture("training/mlp_mse.data0.npy"), dir + "/x.npy");
  extend(fixture("training/mlp_mse.data1.npy"), dir + "/y.npy");
  auto r = run_etscope("train " + fixture("training/mlp_mse.pte") + " --data " + dir + "/x.npy " + dir + "/y.npy --val " +
                       fixture("training/mlp_mse.data0.npy") + " " + fixture("training/mlp_mse.data1.npy") +
                       " --epochs 2 --eval-every 10 --optimizer adamw --lr 0.01 --curve " + dir + "/c.csv");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("the last partial batch (2 samples) is dropped from every epoch"));
  CHECK_THAT(r.out, Catch::Contains("steps      40 (40 in all, 2.00 epochs)"));
  CHECK_THAT(r.out, Catch::Contains("validation loss"));
  // Not a terminal: plain progress lines on stderr, about twenty of them.
  CHECK_THAT(r.err, Catch::Contains("step 1/40") && Catch::Contains("step 40/40") && Catch::Contains("steps/s"));
  CHECK_THAT(r.err, Catch::Contains("validation after step 10: loss"));
  CHECK(r.err.find('\r') == std::string::npos);
  const std::string csv = read_text(dir + "/c.csv");
  CHECK(csv.rfind("step,loss,accuracy,step_ms,forward_backward_ms,optimizer_ms,val_loss,val_accuracy\n", 0) == 0);
  CHECK(count_lines(csv) == 41);
  // Validation after steps 10, 20, 30 and 40: the val_loss column is filled on those rows.
  size_t filled = 0;
  std::istringstream rows(csv);
  std::string row;
  std::getline(rows, row);
  while (std::getline(rows, row)) {
    std::vector<std::string> cells;
    std::stringstream cs(row);
    for (std::string c; std::getline(cs, c, ',');) cells.push_back(c);
    filled += cells.size() >= 7 && !cells[6].empty() ? 1 : 0;
  }
  CHECK(filled == 4);
}

TEST_CASE("etscope train --resume continues a saved run exactly", "[cli][training]") {
  const std::string dir = temp_dir("train_cli_resume");
  const std::string opts = " --optimizer adamw --lr 0.01 --weight-decay 0.1 --betas 0.8,0.99 --amsgrad --shuffle --seed 7";
  auto all = run_etscope("train " + mlp() + " --steps 30" + opts + " --curve " + dir + "/all.json");
  REQUIRE(all.exit_code == 0);
  auto head = run_etscope("train " + mlp() + " --steps 12" + opts + " --save " + dir + "/ck.ptd --curve " + dir + "/head.json");
  REQUIRE(head.exit_code == 0);
  auto tail = run_etscope("train " + mlp() + " --ptd " + dir + "/ck.ptd --resume --steps 18" + opts + " --save " + dir +
                          "/ck.ptd --curve " + dir + "/tail.json");
  INFO(tail.err);
  REQUIRE(tail.exit_code == 0);
  CHECK_THAT(tail.out, Catch::Contains("steps      18 (30 in all"));
  const json a = read_json(dir + "/all.json"), h = read_json(dir + "/head.json"), t = read_json(dir + "/tail.json");
  CHECK(t["first_step"] == 13);
  json joined = h["loss"];
  for (const json& v : t["loss"]) joined.push_back(v);
  CHECK(joined == a["loss"]);  // bit for bit: same order across the epoch boundary, same moments

  auto other = run_etscope("train " + mlp() + " --ptd " + dir + "/ck.ptd --resume --steps 2 --lr 0.01");
  CHECK(other.exit_code == 1);
  CHECK_THAT(other.err, Catch::Contains("ck.optim.ptd") && Catch::Contains("--optimizer"));
}

TEST_CASE("etscope train: usage errors exit 2 before anything is read or written", "[cli][training]") {
  const std::string dir = temp_dir("train_cli_usage");
  auto usage = [&](const std::string& args, const std::string& says) {
    auto r = run_etscope("train " + args);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(says));
  };
  usage(mlp(), "--steps N or --epochs N");
  usage(mlp() + " --steps 0", "--steps N or --epochs N");
  usage(mlp() + " --steps 2 --epochs 1", "excludes");
  usage(mlp() + " --steps 2 --save " + dir + "/no/such/dir/w.ptd", "cannot write into");
  usage(mlp() + " --steps 2 --save " + fixture("training/mlp_mse.data0.npy"), "mlp_mse.data0.npy");
  usage(mlp() + " --steps 2 --optimizer adamw --betas 0.9", "--betas takes two numbers");
  usage(mlp() + " --steps 2 --optimizer adamw --momentum 0.9", "SGD's");
  usage(mlp() + " --steps 2 --amsgrad", "AdamW's");
  usage(mlp() + " --steps 2 --curve " + dir + "/c.txt", ".json or .csv");
  usage(mlp() + " --steps 2 --resume", "--resume needs --ptd");
  usage(mlp() + " --steps 2 --eval-every 3", "--eval-every needs --val");
  usage(mlp() + " --steps 2 --max-memory lots", "--max-memory");
  CHECK(std::filesystem::is_empty(dir));
}

TEST_CASE("etscope train: bad programs and data give one line naming the file and exit 1", "[cli][training]") {
  const std::string dir = temp_dir("train_cli_bad");
  auto fails = [&](const std::string& args, const std::vector<std::string>& says) {
    auto r = run_etscope("train " + args);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 1);
    for (const std::string& s : says) CHECK_THAT(r.err, Catch::Contains(s));
  };
  fails(fixture("models/mlp_layernorm.pte") + " --data " + fixture("training/mlp_mse.data0.npy") + " --steps 1",
        {"mlp_layernorm.pte", "not a training program"});
  fails(fixture("training/mlp_mse.pte") + " --data " + fixture("training/mlp_mse.data1.npy") + " " +
            fixture("training/mlp_mse.data1.npy") + " --steps 1",
        {"mlp_mse.data1.npy", "f32[N,4]"});
  fails(fixture("training/mlp_mse.pte") + " --data " + dir + "/missing.npy " + fixture("training/mlp_mse.data1.npy") + " --steps 1",
        {"missing.npy"});
  // CIFAR-10 records with a label byte past 9.
  std::string records = read_text(fixture("cifar10/synthetic_train.bin")).substr(0, 3073 * 8);
  records[3073 * 3] = 12;
  {
    std::ofstream out(dir + "/bad.bin", std::ios::binary);
    out << records;
  }
  fails(fixture("cifar10/cifar10_train_nodropout.pte") + " --data " + dir + "/bad.bin --steps 1",
        {"bad.bin", "record 3 has label 12"});
  // A learning rate that blows the loss up: stops, keeps the last good weights.
  auto r = run_etscope("train " + mlp() + " --steps 20 --lr 1e18 --save " + dir + "/w.ptd --curve " + dir + "/c.json");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("the loss is") && Catch::Contains("w.ptd"));
  CHECK(std::filesystem::exists(dir + "/w.ptd"));
  CHECK_FALSE(std::filesystem::exists(dir + "/w.optim.ptd"));
  CHECK(read_json(dir + "/c.json")["loss"].size() >= 1);
}

TEST_CASE("etscope train on CIFAR-10 binary data: eager PyTorch's first losses", "[cli][training]") {
  const json training = json::parse(read_text(fixture("cifar10/cifar10.training.json")));
  const std::string dir = temp_dir("train_cli_cifar");
  auto r = run_etscope("train " + fixture("cifar10/cifar10_train_nodropout.pte") + " --data " +
                       fixture("cifar10/synthetic_train.bin") + " --steps 3 --lr 0.001 --curve " + dir + "/c.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("synthetic_train.bin (CIFAR-10, 80 records)"));
  const json curve = read_json(dir + "/c.json");
  const json& want = training["runs"]["cifar10_train_nodropout.sgd"]["eager"]["losses"];
  for (size_t k = 0; k < 3; ++k) CHECK(std::abs(curve["loss"][k].get<double>() - want[k].get<double>()) <= 1e-5);
  CHECK(curve["accuracy"].size() == 3);  // the program's second output is the prediction
  // Issue 28: the final batch's accuracy says what it counts, not a bare fraction.
  std::smatch m;
  const std::string out = r.out;
  REQUIRE(std::regex_search(out, m, std::regex(R"(accuracy   final batch (\d+)/(\d+) right \(([0-9.]+)%\))")));
  const double right = std::stod(m[1].str()), batch = std::stod(m[2].str());
  CHECK(batch > 1);
  CHECK(std::abs(std::stod(m[3].str()) - 100 * right / batch) < 0.05 * std::max(1.0, 100 * right / batch));
  CHECK(std::abs(curve["accuracy"][2].get<double>() - right / batch) < 1e-12);
}
