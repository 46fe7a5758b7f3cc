"""IOBinding, as onnxruntime's (InferenceSession.io_binding()): inputs and outputs bound by name ahead
of runs, on the host or on a device (application API 3's bound runs), so that repeated runs keep
their data where it is: InferenceSession.run_with_iobinding(binding) runs with them."""
import ctypes

import numpy as np

from . import _ephost
from ._env import default_env, resolve_device
from ._ort_value import OrtValue, native_value


def _host_array(element_type, shape, buffer_ptr):
    """A numpy array over the caller's host memory at `buffer_ptr` (onnxruntime's raw-pointer form)."""
    dtype = np.dtype(element_type)
    shape = [int(d) for d in shape]
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(int(buffer_ptr))
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape)


class IOBinding:
    """Bindings of one session's inputs and outputs. Not synchronized: one thread at a time per
    binding (a binding per thread for concurrent runs)."""

    def __init__(self, session):
        self._session = session
        self._native = session._session.io_binding()
        self._inputs = {}   # name -> _ephost.Value
        self._outputs = {}  # name -> _ephost.Value (written into) or _ephost.DeviceName (handed over there)

    # -- inputs ----------------------------------------------------------------------------------
    def bind_cpu_input(self, name, arr_on_cpu):
        """Binds input `name` to a numpy array (its buffer is used, not copied, when C-contiguous of
        the right type; the array must not change until the runs are done)."""
        self._bind_input(name, _ephost.Value.from_numpy(default_env(), arr_on_cpu, _ephost.DeviceName()))

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        """Binds input `name` to `shape` elements of numpy `element_type` at address `buffer_ptr`
        (host memory only: a device's memory is bound as an OrtValue, bind_ortvalue_input)."""
        device = resolve_device(device_type, device_id)
        if device.provider:
            raise _ephost.NotImplemented(
                f"bind_input: ephost does not bind raw device pointers ({device_type}): make the value with "
                f"OrtValue.ortvalue_from_numpy(array, '{device_type}', {device_id}) and bind_ortvalue_input it")
        array = _host_array(element_type, shape, buffer_ptr)
        self._bind_input(name, _ephost.Value.from_numpy(default_env(), array, device))

    def bind_ortvalue_input(self, name, ortvalue):
        """Binds input `name` to an OrtValue (host or device; a device tensor is used in place)."""
        self._bind_input(name, native_value(ortvalue, "ortvalue"))

    def _bind_input(self, name, value):
        self._native.bind_input(name, value)
        self._inputs[name] = value

    def synchronize_inputs(self):
        """Nothing to wait for: ephost's copies are done when they return."""

    def clear_binding_inputs(self):
        self._inputs.clear()
        self._rebind()

    # -- outputs ---------------------------------------------------------------------------------
    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        """Binds output `name` to a device: each run hands over a new tensor there (read it with
        get_outputs() or copy_outputs_to_cpu()). With `buffer_ptr` (host memory, with element_type and
        shape), each run writes the output there instead."""
        device = resolve_device(device_type, device_id)
        if buffer_ptr is None:
            self._native.bind_output_to_device(name, device)
            self._outputs[name] = device
            return
        if device.provider:
            raise _ephost.NotImplemented(
                f"bind_output: ephost does not bind raw device pointers ({device_type}): make the value with "
                f"OrtValue.ortvalue_from_shape_and_type(shape, type, '{device_type}', {device_id}) and "
                f"bind_ortvalue_output it")
        if element_type is None or shape is None:
            raise _ephost.InvalidArgument("bind_output with buffer_ptr needs element_type and shape")
        value = _ephost.Value.from_numpy(default_env(), _host_array(element_type, shape, buffer_ptr), device)
        self._native.bind_output(name, value)
        self._outputs[name] = value

    def bind_ortvalue_output(self, name, ortvalue):
        """Binds output `name` to an OrtValue of its type and shape: each run writes into it."""
        value = native_value(ortvalue, "ortvalue")
        self._native.bind_output(name, value)
        self._outputs[name] = value

    def synchronize_outputs(self):
        """Nothing to wait for: a run's outputs are ready when it returns."""

    def clear_binding_outputs(self):
        self._outputs.clear()
        self._rebind()

    def get_outputs(self):
        """The bound outputs after the last run, as OrtValues, in the order they were bound."""
        return [OrtValue(self._native.output(name)) for name in self._outputs]

    def get_outputs_as_ortvaluevector(self):
        return self.get_outputs()

    def copy_outputs_to_cpu(self):
        """The bound outputs after the last run, as numpy arrays of their own (copied from a device, or
        from a preallocated output that the next run overwrites)."""
        arrays = []
        for name, target in self._outputs.items():
            array = self._native.output(name).numpy()
            arrays.append(array if isinstance(target, _ephost.DeviceName) else np.array(array, copy=True))
        return arrays

    def _rebind(self):
        # The C API clears inputs and outputs together: what remains is bound again.
        self._native.clear()
        for name, value in self._inputs.items():
            self._native.bind_input(name, value)
        for name, target in self._outputs.items():
            if isinstance(target, _ephost.DeviceName):
                self._native.bind_output_to_device(name, target)
            else:
                self._native.bind_output(name, target)

