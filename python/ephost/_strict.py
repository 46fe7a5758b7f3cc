"""Strict attributes, as onnxruntime's pybind11 classes have: assigning an attribute the class does
not define raises AttributeError naming the closest one, instead of silently creating it."""
import difflib


class StrictAttributes:
    """Base of classes whose public attributes are the properties they define."""

    __slots__ = ()

    def __setattr__(self, name, value):
        if name.startswith("_") or isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)
            return
        known = sorted(n for n in dir(type(self))
                       if not n.startswith("_") and isinstance(getattr(type(self), n), property))
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else f"its attributes are: {', '.join(known)}"
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}': {hint}",
                             name=name, obj=self)
