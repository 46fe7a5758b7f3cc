"""Compiling a model into an EPContext model ahead of time, as onnxruntime's ModelCompiler: the
compiled partitions become com.microsoft EPContext nodes, with each plugin's program in a
<model>_<provider>.bin beside the model (or embedded in the nodes), so that a later session loads
them instead of compiling again. ephost writes every file (temp file, then rename) and refuses to
overwrite an existing one unless the session option ep.context_overwrite is "1"."""
import os
import tempfile

from . import _ephost
from ._env import default_env
from ._inference_session import _model_argument, _settings


class ModelCompiler:
    """sess_options                    an ephost.SessionOptions (its own ep.context_* entries apply)
    input_model_path_or_bytes          the source model
    embed_compiled_data_into_model     contexts inside the EPContext nodes instead of a .bin file
    external_initializers_file_path    file beside the output model for the initializers of the nodes
                                       that stay ordinary (default: embedded)
    providers, provider_options        as for InferenceSession (ephost addition: onnxruntime takes
                                       them from the session options)"""

    def __init__(self, sess_options, input_model_path_or_bytes, embed_compiled_data_into_model=False,
                 external_initializers_file_path=None, providers=None, provider_options=None):
        self._sess_options = sess_options
        self._model = _model_argument(input_model_path_or_bytes)
        self._embed = bool(embed_compiled_data_into_model)
        self._external = external_initializers_file_path
        self._providers = providers
        self._provider_options = provider_options

    def _config(self, output_model_path):
        config = [("ep.context_enable", "1"), ("ep.context_embed_mode", "1" if self._embed else "0")]
        if output_model_path is not None:
            config.append(("ep.context_file_path", os.fspath(output_model_path)))
        if self._external is not None:
            # ephost writes that file beside the output model: a path may only name that folder.
            external = os.fspath(self._external)
            if os.path.dirname(external):
                beside = output_model_path if output_model_path is not None else self._model
                folder = os.path.dirname(os.path.abspath(beside)) if isinstance(beside, (str, os.PathLike)) else None
                if folder != os.path.dirname(os.path.abspath(external)):
                    raise _ephost.InvalidArgument(
                        f"external_initializers_file_path {external} must lie beside the output model")
            config.append(("ep.context_model_external_initializers_file_name", os.path.basename(external)))
        return config

    def compile_to_file(self, output_model_path=None):
        """Writes the EPContext model (default: <model>_ctx.onnx beside a model given by path; required
        for a model given as bytes) and returns its path."""
        if output_model_path is None and not isinstance(self._model, str):
            raise _ephost.InvalidArgument("a model given as bytes needs output_model_path")
        settings = _settings(self._sess_options, self._providers, self._provider_options,
                             self._config(output_model_path))
        _ephost.Session(default_env(), self._model, settings)
        if output_model_path is not None:
            return os.fspath(output_model_path)
        root, _ = os.path.splitext(self._model)
        return root + "_ctx.onnx"

    def compile_to_bytes(self):
        """The EPContext model's bytes, contexts embedded (nothing is left on disk)."""
        with tempfile.TemporaryDirectory(prefix="ephost-compile-") as folder:
            saved, self._embed = self._embed, True
            try:
                path = self.compile_to_file(os.path.join(folder, "model_ctx.onnx"))
            finally:
                self._embed = saved
            with open(path, "rb") as f:
                return f.read()


def compile_model(input_model_path_or_bytes, output_model_path=None, providers=None, provider_options=None,
                  sess_options=None, embed_compiled_data_into_model=False, external_initializers_file_path=None):
    """Compiles a model into an EPContext model with `providers` (as InferenceSession's) and returns
    the output path. ModelCompiler(...).compile_to_file(output_model_path) in one call."""
    compiler = ModelCompiler(sess_options, input_model_path_or_bytes, embed_compiled_data_into_model,
                             external_initializers_file_path, providers, provider_options)
    return compiler.compile_to_file(output_model_path)
