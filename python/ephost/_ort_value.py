"""OrtValue, as onnxruntime's: a tensor in host memory or in a device's (application API 3's device
tensors), made from a numpy array or allocated, and read back as a numpy array. device_type is
"cpu" (host memory), a provider's name (its device `device_id`), or "cuda"/"gpu" ("npu") for the
`device_id`-th GPU (NPU) the loaded plugins drive.

shared=True (an ephost addition) makes a host tensor in shared memory (application API 6's shared
tensors): a provider running in a provider host process (session.provider_isolation=process) reads it
as an input, and writes it as an output bound to it (IOBinding.bind_ortvalue_output), where it is,
instead of the host copying the bytes across for each run. numpy() is a view of that memory. In
process it is an ordinary host tensor."""
from . import _ephost
from ._env import default_env, device_type_name, resolve_device


class OrtValue:
    """Made by OrtValue.ortvalue_from_numpy / ortvalue_from_shape_and_type, and returned by
    run_with_ort_values and IOBinding.get_outputs()."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if not isinstance(value, _ephost.Value):
            raise _ephost.InvalidArgument(
                "OrtValue is made by OrtValue.ortvalue_from_numpy(array, device_type, device_id) or "
                "OrtValue.ortvalue_from_shape_and_type(shape, element_type, device_type, device_id)")
        self._value = value

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0, *, shared=False):
        """A tensor holding `numpy_obj`'s elements: on the host it shares the array's buffer (the
        array is kept alive; a copy is made only when it is not C-contiguous), on a device it is a
        copy. shared=True: a copy in a new shared tensor (host memory; see the module's note)."""
        device = _host_for_shared(device_type) if shared else resolve_device(device_type, device_id)
        return OrtValue(_ephost.Value.from_numpy(default_env(), numpy_obj, device, bool(shared)))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0, *, shared=False):
        """A tensor of `shape` and numpy `element_type` (e.g. numpy.float32): zero-filled on the host,
        uninitialized on a device. shared=True: a zero-filled shared tensor (host memory, numbers only;
        see the module's note), to fill through numpy() and bind as an input or an output."""
        device = _host_for_shared(device_type) if shared else resolve_device(device_type, device_id)
        return OrtValue(_ephost.Value.allocate(default_env(), [int(d) for d in shape], element_type, device,
                                               bool(shared)))

    def is_shared(self):
        """Whether the tensor's elements lie in shared memory: made with shared=True, or an output an
        isolated provider left in shared memory the host allocated for it (ephost addition)."""
        return self._value.is_shared()

    def numpy(self):
        """The elements as a numpy array (a view of a host tensor's buffer; a copy from a device); a
        list of arrays for a sequence, None for an empty optional."""
        return self._value.numpy()

    def shape(self):
        return list(self._value.shape())

    def element_type(self):
        """ONNX's element type number (TensorProto.FLOAT is 1), as onnxruntime's."""
        return int(self._value.elem_type())

    def data_type(self):
        """ONNX's type string: 'tensor(float)', 'seq(tensor(int64))'."""
        name = _ephost.element_type_name(self._value.elem_type())
        kind = self._value.kind()
        if kind == _ephost.ValueKind.SEQUENCE:
            return f"seq(tensor({name}))"
        if kind == _ephost.ValueKind.NONE:
            return "optional"
        return f"tensor({name})"

    def device_name(self):
        """'cpu' for host memory, else the name of the plugin whose device holds it."""
        return device_type_name(self._value.location())

    def is_tensor(self):
        return self._value.kind() == _ephost.ValueKind.TENSOR

    def is_tensor_sequence(self):
        return self._value.kind() == _ephost.ValueKind.SEQUENCE

    def has_value(self):
        """False for an empty optional."""
        return self._value.kind() != _ephost.ValueKind.NONE

    def data_ptr(self):
        """The address of a host tensor's elements (0 for a device tensor, whose memory the host does
        not address)."""
        return self._value.data_ptr()

    def update_inplace(self, np_arr):
        """Copies `np_arr`'s elements into this tensor (same element type and count), wherever it lives."""
        self._value.update_inplace(np_arr)

    def __repr__(self):
        if self.is_tensor():
            return f"OrtValue({self.data_type()}, shape={self.shape()}, device={self.device_name()!r})"
        return f"OrtValue({self.data_type()})"


def _host_for_shared(device_type):
    """Host memory, where shared tensors live; a device's memory never is shared."""
    if not isinstance(device_type, str) or device_type.lower() != "cpu":
        raise _ephost.InvalidArgument(
            f"shared=True makes a tensor in shared host memory, not on device {device_type!r}: use "
            f"device_type='cpu' (a provider host process copies it to its device straight from there)")
    return _ephost.DeviceName()


def native_value(value, what):
    if not isinstance(value, OrtValue):
        raise _ephost.InvalidArgument(
            f"{what} must be an ephost.OrtValue, got {type(value).__name__}: make one with "
            f"OrtValue.ortvalue_from_numpy(array)")
    return value._value
