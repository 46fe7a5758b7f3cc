#include "errors.h"

#include <map>
#include <string>

#include "ephost/ephost_cxx_api.h"

namespace py = pybind11;

namespace ephost_python {
namespace {

struct ErrorClass {
  EphostStatusCode code;
  const char* name;  // ONNX Runtime's Python class name for the code
};
constexpr ErrorClass kErrorClasses[] = {
    {EPHOST_FAIL, "Fail"},
    {EPHOST_INVALID_ARGUMENT, "InvalidArgument"},
    {EPHOST_NO_SUCHFILE, "NoSuchFile"},
    {EPHOST_NO_MODEL, "NoModel"},
    {EPHOST_ENGINE_ERROR, "EngineError"},
    {EPHOST_RUNTIME_EXCEPTION, "RuntimeException"},
    {EPHOST_INVALID_PROTOBUF, "InvalidProtobuf"},
    {EPHOST_MODEL_LOADED, "ModelLoaded"},
    {EPHOST_NOT_IMPLEMENTED, "NotImplemented"},
    {EPHOST_INVALID_GRAPH, "InvalidGraph"},
    {EPHOST_EP_FAIL, "EPFail"},
    // ephost's own: a run stopped early. Subclasses of Fail, which onnxruntime raises for terminate.
    {EPHOST_CANCELLED, "Cancelled"},
    {EPHOST_DEADLINE_EXCEEDED, "DeadlineExceeded"},
};

// The classes live as long as the process: the module is never unloaded, and releasing them at exit,
// after the interpreter is gone, would crash.
PyObject* g_base = nullptr;
std::map<EphostStatusCode, PyObject*>& classes() {
  static auto* by_code = new std::map<EphostStatusCode, PyObject*>();
  return *by_code;
}

PyObject* new_class(py::module_& module, const char* name, PyObject* base, const char* doc) {
  const std::string qualified = std::string("ephost.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (cls == nullptr) throw py::error_already_set();
  module.add_object(name, py::handle(cls));
  return cls;
}

}  // namespace

void register_errors(py::module_& module) {
  g_base = new_class(module, "EphostError", PyExc_RuntimeError,
                     "Base class of every error ephost raises; `code` names the status code.");
  py::handle(g_base).attr("code") = py::str("");
  for (const ErrorClass& e : kErrorClasses) {
    const std::string code_name = Ephost::error_code_name(e.code);
    const std::string doc = "ephost status " + code_name + ".";
    // NotImplemented is also Python's NotImplementedError, so that `except NotImplementedError` sees it.
    // A stopped run is a Fail, as onnxruntime reports a terminated run, so `except Fail` still sees it.
    const bool stopped = e.code == EPHOST_CANCELLED || e.code == EPHOST_DEADLINE_EXCEEDED;
    py::tuple bases = e.code == EPHOST_NOT_IMPLEMENTED
                          ? py::make_tuple(py::handle(g_base), py::handle(PyExc_NotImplementedError))
                      : stopped ? py::make_tuple(py::handle(classes().at(EPHOST_FAIL)))
                                : py::make_tuple(py::handle(g_base));
    PyObject* cls = new_class(module, e.name, bases.ptr(), doc.c_str());
    py::handle(cls).attr("code") = py::str(code_name);
    classes()[e.code] = cls;
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Ephost::Exception& e) {
      auto it = classes().find(e.code());
      PyErr_SetString(it != classes().end() ? it->second : g_base, e.message().c_str());
    }
  });
}

}  // namespace ephost_python
