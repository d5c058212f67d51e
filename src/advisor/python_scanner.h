#pragma once
// A light Python reader for job code and Python config files: a real tokenizer (strings with
// prefixes and triple quotes, comments, numbers, bracket-aware logical lines, backslash
// continuations) plus a literal evaluator, and the facts the metadata extractor needs:
//   - module-level assignments `name = <expr>` (nanoGPT-style globals, mmcv/mmengine configs),
//   - augmented assignments `name //= other` and attribute assignments `args.x = <expr>`,
//   - calls with their positional and keyword arguments (`parser.add_argument('--lr',
//     default=1e-3)`, `YOLO('yolov8n.pt').train(epochs=30)`, `from_pretrained(...,
//     torch_dtype=..)`),
//   - annotated class fields `name: type = field(default=...)` (dataclasses, HfArgumentParser),
//   - function definitions with their parameters' defaults (the entry function of python-fire /
//     typer / click programs),
//   - imported modules.
// It never executes code. Values are JSON: numbers, strings, bools, null (None), arrays (lists,
// tuples), objects (dict(...) / {...}); anything else (a call, a conditional, an unknown name) is
// not a literal and is reported with its source text. Expressions over literals and earlier
// module-level names (`5 * 8`, `data_root + 'x'`) are evaluated.
//
// Thread-safety: stateless functions.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schedmate::advisor {

// A value that may not be a literal: `text` always holds the source expression.
struct PyValue {
  std::optional<nlohmann::json> literal;
  std::string text;
};

struct PyAssignment {
  std::string target;  // "lr", "args.lr", "cfg.optimizer.lr"
  std::string op;      // "=", "//=", "*=", "+=", ...
  PyValue value;
  int line = 0;
  int indent = 0;  // column of the statement; 0 = module level
};

struct PyCall {
  std::string callee;  // dotted name as written, e.g. "parser.add_argument", "YOLO", "model.train"
  std::vector<PyValue> args;
  std::vector<std::pair<std::string, PyValue>> kwargs;
  int line = 0;
  const PyValue* Kwarg(std::string_view name) const;
};

struct PyField {  // annotated assignment in a class body
  std::string cls;
  std::string name;
  PyValue value;  // the default (field(default=X) is unwrapped)
  int line = 0;
};

struct PyParam {  // a parameter of a `def`
  std::string name;
  std::optional<PyValue> value;  // its default; typer's Option(X)/Argument(X) is unwrapped to X
  int line = 0;
};

struct PyFunction {  // `def name(params):`, at any depth
  std::string name;
  std::vector<PyParam> params;
  int line = 0;
  int indent = 0;
};

struct PyFacts {
  std::vector<PyAssignment> assignments;  // in file order
  std::vector<PyCall> calls;              // in file order (outer call before inner calls)
  std::vector<PyField> fields;
  std::vector<PyFunction> functions;                  // in file order
  std::vector<std::pair<std::string, int>> imports;   // module, line
  std::vector<std::pair<std::string, int>> comments;  // comment text (without '#'), line
  // Final values of module-level `name = literal` assignments, after evaluation in order.
  std::map<std::string, nlohmann::json> globals;
  std::map<std::string, int> global_lines;
};

// Scans Python source. Never fails: unparseable statements are skipped.
PyFacts ScanPython(std::string_view source);

// Evaluates one expression (e.g. a command-line value written Python-style). nullopt if it is not
// a literal.
std::optional<nlohmann::json> EvalPythonLiteral(std::string_view expr);

}  // namespace schedmate::advisor
