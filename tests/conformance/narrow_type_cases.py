"""Cases for the element types of opsets 19 to 25 that numpy has no dtype for: the float8 family, float8e8m0,
float4e2m1, int4, uint4, int2 and uint2. Used by generate_opset_tests.py (which writes them).

Tensors of these types are NarrowTensor objects: their codes, one uint8 per element (the bit pattern of each
element), written packed (two 4-bit or four 2-bit codes per byte, first element in the low bits) as ONNX stores
them, in raw_data or (typed=True) in int32_data.

Expected outputs come from the references below, written from ONNX's specification (Cast-19 to Cast-25's saturate
tables, Cast-24's round_mode, QuantizeLinear and DequantizeLinear) and from ONNX's reference implementation's
rules where the specification is silent (int4 and int2: clamp, then round half to even; float4e2m1: a NaN becomes
+6). A value is encoded by searching every code of the type for the nearest value (ties to the even code), not by
the bit arithmetic the CPU plugin uses, so that the two are independent.
"""
import numpy as np
from onnx import helper, TensorProto

FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ = 17, 18, 19, 20
UINT4, INT4, FLOAT4E2M1, FLOAT8E8M0, UINT2, INT2 = 21, 22, 23, 24, 25, 26
NAMES = {17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4", 22: "int4",
         23: "float4e2m1", 24: "float8e8m0", 25: "uint2", 26: "int2"}
# The opset that added each type.
OPSET_OF = {17: 19, 18: 19, 19: 19, 20: 19, 21: 21, 22: 21, 23: 23, 24: 24, 25: 25, 26: 25}
BITS = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2}
# exponent bits, mantissa bits, bias, specials ("fn": S.1111.111 is NaN; "fnuz": 0x80 is the NaN; "ieee"; "none")
MINIFLOATS = {17: (4, 3, 7, "fn"), 18: (4, 3, 8, "fnuz"), 19: (5, 2, 15, "ieee"), 20: (5, 2, 16, "fnuz"),
              23: (2, 1, 1, "none")}
INT_RANGES = {21: (0, 15), 22: (-8, 7), 25: (0, 3), 26: (-2, 1)}


def bits_of(t):
    return BITS.get(t, 8)


class NarrowTensor:
    def __init__(self, elem_type, codes, typed=False):
        self.elem_type, self.typed = elem_type, typed
        self.codes = np.asarray(codes, dtype=np.uint8)
        self.shape = self.codes.shape

    def packed(self):
        bits = bits_of(self.elem_type)
        flat = [int(c) for c in self.codes.reshape(-1)]
        per = 8 // bits
        out = []
        for i in range(0, len(flat), per):
            b = 0
            for k, c in enumerate(flat[i:i + per]):
                b |= (c & ((1 << bits) - 1)) << (bits * k)
            out.append(b)
        return bytes(out)

    def to_proto(self, name):
        t = TensorProto()
        t.name = name
        t.data_type = self.elem_type
        t.dims.extend(self.shape)
        if self.typed:
            t.int32_data.extend(self.packed())  # one code per entry for float8, one packed byte for the others
        else:
            t.raw_data = self.packed()
        return t

    def value_info(self, name):
        return helper.make_tensor_value_info(name, self.elem_type, self.shape)


# ---- decoding ---------------------------------------------------------------------------------------

def decode(t, code):
    code = int(code)
    if t in INT_RANGES:
        bits = bits_of(t)
        lo, _ = INT_RANGES[t]
        return float(code - (1 << bits) if lo < 0 and code >> (bits - 1) else code)
    if t == FLOAT8E8M0:
        return float("nan") if code == 0xFF else 2.0 ** (code - 127)
    e_bits, m_bits, bias, specials = MINIFLOATS[t]
    sign_bit = 1 << (e_bits + m_bits)
    negative = bool(code & sign_bit)
    e, m = (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
    if specials == "fnuz" and code == sign_bit:
        return float("nan")
    if specials == "fn" and (code & (sign_bit - 1)) == sign_bit - 1:
        return float("nan")
    if specials == "ieee" and e == (1 << e_bits) - 1:
        return float("nan") if m else (-np.inf if negative else np.inf)
    v = m * 2.0 ** (1 - bias - m_bits) if e == 0 else (1 + m / 2.0 ** m_bits) * 2.0 ** (e - bias)
    return -v if negative else v


def decode_all(t, codes):
    return np.array([decode(t, c) for c in np.asarray(codes).reshape(-1)], np.float64).reshape(np.shape(codes))


# ---- encoding (by search over every code) ------------------------------------------------------------

def nan_code(t, negative):
    e_bits, m_bits, _, specials = MINIFLOATS[t]
    sign_bit = 1 << (e_bits + m_bits)
    if specials == "fnuz":
        return sign_bit
    if specials == "none":
        return max_code(t)
    return (sign_bit - 1) | (sign_bit if negative else 0)


def max_code(t):
    e_bits, m_bits, _, _ = MINIFLOATS[t]
    positive = [c for c in range(1 << (e_bits + m_bits)) if np.isfinite(decode(t, c))]
    return max(positive, key=lambda c: decode(t, c))


def overflow(t, negative, saturate):
    e_bits, m_bits, _, specials = MINIFLOATS[t]
    sign = (1 << (e_bits + m_bits)) if negative else 0
    if saturate or specials == "none":
        return max_code(t) | sign
    if specials == "ieee":
        return (((1 << e_bits) - 1) << m_bits) | sign
    return nan_code(t, negative)


def encode_float(t, x, saturate):
    e_bits, m_bits, _, specials = MINIFLOATS[t]
    sign_bit = 1 << (e_bits + m_bits)
    negative = bool(np.signbit(x))
    if np.isnan(x):
        return nan_code(t, negative)
    if np.isinf(x):
        return overflow(t, negative, saturate)
    a = abs(float(x))
    top = max_code(t)
    vmax = decode(t, top)
    beyond = vmax + 2.0 ** (np.floor(np.log2(vmax)) - m_bits)  # the next value, had the format one more
    candidates = [(decode(t, c), c) for c in range(top + 1)] + [(beyond, top + 1)]
    best = min(candidates, key=lambda vc: (abs(vc[0] - a), vc[1] & 1))  # nearest; ties to the even code
    if best[1] == top + 1:
        return overflow(t, negative, saturate)
    if best[0] == 0:
        return 0 if specials == "fnuz" else (sign_bit if negative else 0)
    return best[1] | (sign_bit if negative else 0)


def encode_e8m0(x, saturate, round_mode):
    if np.isnan(x) or x < 0:
        return 0xFF
    if np.isinf(x):
        return 0xFE if saturate else 0xFF
    if x == 0:
        return 0 if saturate else 0xFF
    powers = [2.0 ** (c - 127) for c in range(255)]
    below = max([c for c in range(255) if powers[c] <= x], default=None)
    above = min([c for c in range(255) if powers[c] >= x], default=None)
    if round_mode == "up":
        code = above if above is not None else 255
    elif round_mode == "down":
        code = below if below is not None else -1
    else:
        if below is None or above is None:
            code = -1 if below is None else 255
        else:
            code = above if x - powers[below] >= powers[above] - x else below  # ties up
    if code > 254 or code < 0:
        return (0xFE if code > 254 else 0) if saturate else 0xFF
    return code


def encode_int(t, x):
    lo, hi = INT_RANGES[t]
    return int(np.rint(np.clip(x, lo, hi))) & ((1 << bits_of(t)) - 1)


def encode(t, x, saturate=True, round_mode="up"):
    if t in INT_RANGES:
        return encode_int(t, x)
    if t == FLOAT8E8M0:
        return encode_e8m0(x, saturate, round_mode)
    return encode_float(t, x, saturate)


def encode_all(t, values, saturate=True, round_mode="up"):
    values = np.asarray(values)
    return np.array([encode(t, float(v), saturate, round_mode) for v in values.reshape(-1)],
                    np.uint8).reshape(values.shape)


# ---- inputs -------------------------------------------------------------------------------------------

def boundary_values(t):
    """Values that probe every rule of a cast to float type t: zeros, NaN, infinities, the largest value and
    what lies past it, ties in the subnormal and normal ranges, and a spread of ordinary values."""
    if t == FLOAT8E8M0:
        return np.array([0.0, np.nan, np.inf, 1.0, 2.0, 3.0, 1.5, 1.25, 1.75, 0.75, 2.0 ** -127, 2.0 ** -128,
                         2.0 ** 127, 2.0 ** 127 * 1.5, 3e38, 1e-39, 6.0, 1000.0, 0.1], np.float32)
    top = max_code(t)
    vmax = decode(t, top)
    _, m_bits, bias, _ = MINIFLOATS[t]
    sub = 2.0 ** (1 - bias - m_bits)  # the smallest subnormal
    beyond = vmax + 2.0 ** (np.floor(np.log2(vmax)) - m_bits)
    one_ulp = 2.0 ** -m_bits
    v = [0.0, -0.0, np.nan, np.inf, -np.inf, vmax, -vmax, (vmax + beyond) / 2, -(vmax + beyond) / 2,
         vmax * 1.01, beyond, beyond * 4, sub, -sub, sub / 2, sub * 1.5, sub * 0.49, 2.0 ** (1 - bias),
         1 + one_ulp / 2, 1 + 1.5 * one_ulp, -(1 + 1.5 * one_ulp), 1.0, -1.0]
    rng = np.random.default_rng(17 + t)
    v += list(rng.uniform(-vmax * 1.2, vmax * 1.2, 16))
    return np.array(v, np.float32)


def all_codes(t):
    codes = list(range(1 << bits_of(t)))
    if bits_of(t) < 8:
        codes += codes[1:bits_of(t) // 2 + 2]  # and a last byte only partly filled
    return np.array(codes, np.uint8)


def dequantize_ref(t, x_codes, scale, zp_codes, axis, block):
    x = decode_all(t, x_codes)
    z = decode_all(t, zp_codes) if zp_codes is not None else np.zeros(np.shape(scale))
    s, z = expand_scale(np.asarray(scale, np.float32), x.shape, axis, block), expand_scale(z, x.shape, axis, block)
    return ((x - z).astype(np.float32) * s).astype(np.float32)


def quantize_ref(t, x, scale, zp_codes, axis, block, saturate=True):
    s = expand_scale(np.asarray(scale, np.float32), x.shape, axis, block)
    z = expand_scale(decode_all(t, zp_codes) if zp_codes is not None else np.zeros(np.shape(scale)), x.shape,
                     axis, block)
    q = (x / s).astype(np.float32)
    if t in INT_RANGES:
        q = np.rint(q)
    return encode_all(t, q.astype(np.float64) + z, saturate)


def expand_scale(v, shape, axis, block):
    v = np.asarray(v)
    if v.ndim == 0 or v.size == 1 and block == 0:
        return np.broadcast_to(v.reshape(()), shape)
    axis = axis % len(shape)
    if block == 0:
        view = [1] * len(shape)
        view[axis] = shape[axis]
        return np.broadcast_to(v.reshape(view), shape)
    return np.repeat(v, block, axis=axis).take(range(shape[axis]), axis=axis)


# ---- the cases ----------------------------------------------------------------------------------------

def add_cases(case):
    """Adds every case through case(op, opset, variant, node, inputs, outputs, initializers)."""
    with np.errstate(over="ignore"):  # float16 views of float8e8m0's range overflow to inf, as a cast does
        add_all(case)


def add_all(case):
    for t in sorted(NAMES):
        name, opset = NAMES[t], OPSET_OF[t]
        cast_cases(case, t, name, opset)
        initializer_cases(case, t, name, opset)
    quantize_cases(case)
    packed_shape_cases(case)
    bit_cast_cases(case)
    float_class_cases(case)


def float_class_cases(case):
    """IsInf-20 and IsNaN-20 on every code of each float8 type (opset 20 added float8 to both)."""
    for t in (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ):
        codes = all_codes(t)
        values = decode_all(t, codes)
        x = NarrowTensor(t, codes)
        case("IsNaN", 20, NAMES[t], helper.make_node("IsNaN", ["x"], ["y"]), [("x", x)], [("y", np.isnan(values))])
        for variant, pos, neg in (("", 1, 1), ("_positive_only", 1, 0), ("_negative_only", 0, 1)):
            attrs = {} if variant == "" else {"detect_positive": pos, "detect_negative": neg}
            expected = np.isinf(values) & (((values > 0) & bool(pos)) | ((values < 0) & bool(neg)))
            case("IsInf", 20, NAMES[t] + variant, helper.make_node("IsInf", ["x"], ["y"], **attrs), [("x", x)],
                 [("y", expected)])


def cast_cases(case, t, name, opset):
    def cast(variant, x, y, **attrs):
        case("Cast", opset, variant, helper.make_node("Cast", ["x"], ["y"], to=attrs.pop("to", t), **attrs),
             [("x", x)], [("y", y)])

    codes = all_codes(t)
    cast(f"{name}_to_float", NarrowTensor(t, codes), decode_all(t, codes).astype(np.float32), to=TensorProto.FLOAT)
    cast(f"{name}_to_double", NarrowTensor(t, codes), decode_all(t, codes), to=TensorProto.DOUBLE)
    if t in INT_RANGES:
        lo, hi = INT_RANGES[t]
        cast(f"{name}_to_int64", NarrowTensor(t, codes), decode_all(t, codes).astype(np.int64), to=TensorProto.INT64)
        ints = np.array([-100, lo - 1, lo, -1, 0, 1, hi, hi + 1, 100, 2 ** 31 - 1, -2 ** 31], np.int64)
        ints = ints[(ints >= -2 ** 31) & (ints < 2 ** 31)].astype(np.int32)
        cast(f"int32_to_{name}_clamps", ints, NarrowTensor(t, encode_all(t, ints)))
        halves = np.array([lo - 0.5, lo + 0.5, -0.5, 0.5, 1.5, 2.5, hi - 0.5, hi + 0.49, hi + 3.7, -1e9], np.float32)
        cast(f"float_to_{name}_rounds_half_even", halves, NarrowTensor(t, encode_all(t, halves)))
        text = np.array(["3", "-9", "+1", "2.5", "1e3"], dtype=object)
        cast(f"string_to_{name}", text, NarrowTensor(t, encode_all(t, [float(v) for v in text])))
        cast(f"{name}_to_string", NarrowTensor(t, codes), np.array([str(int(v)) for v in decode_all(t, codes)],
                                                                    dtype=object), to=TensorProto.STRING)
        case("CastLike", opset, f"float_to_{name}",
             helper.make_node("CastLike", ["x", "like"], ["y"]),
             [("x", halves), ("like", NarrowTensor(t, np.zeros((1,), np.uint8)))],
             [("y", NarrowTensor(t, encode_all(t, halves)))])
        return
    x = boundary_values(t)
    cast(f"float_to_{name}", x, NarrowTensor(t, encode_all(t, x, True)))
    cast(f"double_to_{name}", x.astype(np.float64), NarrowTensor(t, encode_all(t, x, True)))
    cast(f"float16_to_{name}", x.astype(np.float16),
         NarrowTensor(t, encode_all(t, x.astype(np.float16).astype(np.float64), True)))
    if t != FLOAT4E2M1:
        cast(f"float_to_{name}_no_saturate", x, NarrowTensor(t, encode_all(t, x, False)), saturate=0)
    cast(f"{name}_to_float16", NarrowTensor(t, codes), decode_all(t, codes).astype(np.float16),
         to=TensorProto.FLOAT16)
    case("CastLike", opset, f"float_to_{name}", helper.make_node("CastLike", ["x", "like"], ["y"]),
         [("x", x), ("like", NarrowTensor(t, np.zeros((1,), np.uint8)))], [("y", NarrowTensor(t, encode_all(t, x)))])
    if t == FLOAT8E8M0:
        for mode in ("up", "down", "nearest"):
            for saturate in (1, 0):
                cast(f"float_to_{name}_{mode}_saturate{saturate}", x,
                     NarrowTensor(t, encode_all(t, x, bool(saturate), mode)), round_mode=mode, saturate=saturate)
    if t in (FLOAT8E4M3FN, FLOAT8E5M2):  # between two narrow types: through the value
        other = FLOAT8E5M2 if t == FLOAT8E4M3FN else FLOAT8E4M3FN
        values = decode_all(t, codes)
        cast(f"{name}_to_{NAMES[other]}", NarrowTensor(t, codes), NarrowTensor(other, encode_all(other, values)),
             to=other)


def initializer_cases(case, t, name, opset):
    """A Cast of an initializer to float: the initializer in raw_data and in int32_data."""
    codes = all_codes(t)[: 2 * 3 * (2 if bits_of(t) == 8 else 1)]
    codes = codes.reshape(2, -1)
    for form, typed in (("raw", False), ("typed", True)):
        case("Cast", OPSET_OF[t], f"{name}_initializer_{form}",
             helper.make_node("Cast", ["w"], ["y"], to=TensorProto.FLOAT), [],
             [("y", decode_all(t, codes).astype(np.float32))], [("w", NarrowTensor(t, codes, typed))])


def quantize_cases(case):
    rng = np.random.default_rng(2125)
    # DequantizeLinear: int4 blocked with a zero point, uint4 per axis, int2, float8 per tensor, float4e2m1
    for t, opset, variant, shape, scale_shape, axis, block, with_zp in (
            (INT4, 21, "int4_blocked", (4, 6), (4, 3), 1, 2, True),
            (UINT4, 21, "uint4_per_axis", (3, 5), (5,), 1, 0, True),
            (INT4, 21, "int4_blocked_ragged_axis0", (5, 3), (2, 3), 0, 3, False),
            (INT2, 25, "int2_per_tensor", (7,), (), 0, 0, True),
            (UINT2, 25, "uint2_blocked", (2, 8), (2, 2), 1, 4, True),
            (FLOAT8E4M3FN, 19, "float8e4m3fn", (3, 4), (), 1, 0, False),
            (FLOAT8E5M2, 21, "float8e5m2_per_axis", (2, 3), (3,), 1, 0, False),
            (FLOAT4E2M1, 23, "float4e2m1_blocked", (2, 4), (2, 2), 1, 2, False)):
        size = int(np.prod(shape))
        codes = rng.integers(0, 1 << bits_of(t), size).astype(np.uint8).reshape(shape)
        if t in MINIFLOATS:  # finite codes only: NaN * scale is NaN either way, but keep the case readable
            codes = np.array([c if np.isfinite(decode(t, c)) else 0 for c in codes.reshape(-1)], np.uint8).reshape(shape)
        scale = rng.uniform(0.05, 0.5, scale_shape).astype(np.float32)
        zp = rng.integers(0, 1 << bits_of(t), scale_shape).astype(np.uint8) if with_zp else None
        names = ["x", "s"] + (["z"] if with_zp else [])
        inputs = [("x", NarrowTensor(t, codes)), ("s", scale)] + ([("z", NarrowTensor(t, zp))] if with_zp else [])
        attrs = {"axis": axis}
        if block:
            attrs["block_size"] = block
        case("DequantizeLinear", opset, variant, helper.make_node("DequantizeLinear", names, ["y"], **attrs), inputs,
             [("y", dequantize_ref(t, codes, scale, zp, axis, block))])
    # QuantizeLinear: to int4 (blocked, zero point), uint4 (output_dtype), float8 (saturate on and off), float4
    for t, opset, variant, shape, scale_shape, axis, block, zp_mode, attrs in (
            (INT4, 21, "int4_blocked", (3, 6), (3, 2), 1, 3, "random", {}),
            (UINT4, 21, "uint4_output_dtype", (8,), (), 0, 0, "none", {"output_dtype": UINT4}),
            (INT4, 21, "int4_per_axis", (4, 3), (4,), 0, 0, "random", {}),
            (INT2, 25, "int2_per_tensor", (9,), (), 0, 0, "random", {}),
            (UINT2, 25, "uint2_output_dtype", (2, 5), (), 0, 0, "none", {"output_dtype": UINT2}),
            (FLOAT8E4M3FN, 19, "float8e4m3fn_saturate", (3, 4), (), 1, 0, "zero", {"saturate": 1}),
            (FLOAT8E4M3FN, 19, "float8e4m3fn_no_saturate", (3, 4), (), 1, 0, "zero", {"saturate": 0}),
            (FLOAT8E5M2, 19, "float8e5m2_per_axis", (2, 3), (3,), 1, 0, "zero", {}),
            (FLOAT8E4M3FNUZ, 21, "float8e4m3fnuz_output_dtype", (5,), (), 0, 0, "none",
             {"output_dtype": FLOAT8E4M3FNUZ}),
            (FLOAT4E2M1, 23, "float4e2m1_blocked", (2, 4), (2, 2), 1, 2, "zero", {})):
        x = rng.uniform(-40, 40, shape).astype(np.float32)
        if t in MINIFLOATS:
            x = x * 40  # past the largest float8e4m3fn value (448), to see saturation
        scale = rng.uniform(0.05, 0.5, scale_shape).astype(np.float32)
        zp = None
        if zp_mode == "random":
            zp = rng.integers(0, 1 << bits_of(t), scale_shape).astype(np.uint8)
        elif zp_mode == "zero":
            zp = np.zeros(scale_shape, np.uint8)
        names = ["x", "s"] + (["z"] if zp is not None else [])
        inputs = [("x", x), ("s", scale)] + ([("z", NarrowTensor(t, zp))] if zp is not None else [])
        node_attrs = dict(attrs, axis=axis)
        if block:
            node_attrs["block_size"] = block
        case("QuantizeLinear", opset, variant, helper.make_node("QuantizeLinear", names, ["y"], **node_attrs), inputs,
             [("y", NarrowTensor(t, quantize_ref(t, x, scale, zp, axis, block, attrs.get("saturate", 1) != 0)))])


def packed_shape_cases(case):
    """The operators that move a packed tensor whole: Reshape, Identity, Flatten, Squeeze, Unsqueeze."""
    rng = np.random.default_rng(2126)
    for t in (INT4, UINT4, FLOAT4E2M1, INT2, UINT2):
        opset, name = OPSET_OF[t], NAMES[t]
        codes = rng.integers(0, 1 << bits_of(t), (3, 5)).astype(np.uint8)
        x = NarrowTensor(t, codes)
        case("Reshape", opset, name, helper.make_node("Reshape", ["x", "s"], ["y"]),
             [("x", x), ("s", np.array([5, 3], np.int64))], [("y", NarrowTensor(t, codes.reshape(5, 3)))])
        case("Identity", opset, name, helper.make_node("Identity", ["x"], ["y"]), [("x", x)], [("y", x)])
        case("Unsqueeze", opset, name, helper.make_node("Unsqueeze", ["x", "a"], ["y"]),
             [("x", x), ("a", np.array([0], np.int64))], [("y", NarrowTensor(t, codes.reshape(1, 3, 5)))])


def bit_cast_cases(case):
    """BitCast-26 between types of one width: the bits stay, the meaning changes."""
    codes = np.arange(0, 256, 7, dtype=np.uint8)
    case("BitCast", 26, "uint8_to_float8e4m3fn", helper.make_node("BitCast", ["x"], ["y"], to=FLOAT8E4M3FN),
         [("x", codes)], [("y", NarrowTensor(FLOAT8E4M3FN, codes))])
    nibbles = np.array([0, 1, 7, 8, 9, 15, 3], np.uint8)
    case("BitCast", 26, "int4_to_uint4", helper.make_node("BitCast", ["x"], ["y"], to=UINT4),
         [("x", NarrowTensor(INT4, nibbles))], [("y", NarrowTensor(UINT4, nibbles))])
    case("BitCast", 26, "float4e2m1_to_int4", helper.make_node("BitCast", ["x"], ["y"], to=INT4),
         [("x", NarrowTensor(FLOAT4E2M1, nibbles))], [("y", NarrowTensor(INT4, nibbles))])
