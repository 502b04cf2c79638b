"""The mutations of scripts/mutation-fuzz.py: IR text, pipeline options,
schedules (JSON) and safetensors bytes. Each takes its input and a
random.Random and returns the mutated input and what it did; the fuzz is
deterministic for a seed as long as these draw in the same order.
"""

import json
import re
import struct


SPECIAL_INTS = ["0", "-1", "1", "2", "3", "7", "65536", "2147483647", "2147483648", "4294967296",
                "1099511627777", "4611686018427387904", "9223372036854775807",
                "9223372036854775808", "18446744073709551616", "-9223372036854775808"]
SPECIAL_FLOATS = ["nan", "inf", "-inf", "0.0", "-0.0", "1.0e+300", "-1.0e+300", "1.0e-320",
                  "0x7FC00000", "0x7F800000", "3.4e+38"]
NUMBER = re.compile(r"(?<![\w%#@.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
DIM = re.compile(r"(?<=[<x])\d+(?=x)")
TOKEN = re.compile(r"%[\w.#]+|@[\w.\"]+|\"[^\"\n]*\"|[A-Za-z_][\w.$]*|\d+|\S")
WSC_ATTR = re.compile(r"\bwsc\.[a-z_]+(?:\s*=\s*(?:\"[^\"]*\"|[^,}\s]+(?:\s*:\s*[a-z0-9]+)?))?")
ATTR_NAMES = ["wsc.loss", "wsc.param", "wsc.input", "wsc.label", "wsc.buffer", "wsc.output",
              "wsc.num_classes", "wsc.ignore_index", "wsc.gradient", "wsc.optimizer", "wsc.bogus"]
BLOB = re.compile(r"\"0x([0-9A-Fa-f]+)\"")


def mutate_number(text, rng):
    spots = list(NUMBER.finditer(text))
    if not spots:
        return text, "number(none)"
    m = rng.choice(spots)
    new = rng.choice(SPECIAL_FLOATS if "." in m.group(0) or rng.random() < 0.2 else SPECIAL_INTS)
    return text[:m.start()] + new + text[m.end():], f"number {m.group(0)}->{new}"


def mutate_dim(text, rng, everywhere):
    spots = list(DIM.finditer(text))
    if not spots:
        return mutate_number(text, rng)
    old = rng.choice(spots).group(0)
    new = rng.choice(["0", "1", "3", "300", "65536", "2147483648", "1099511627777",
                      "4611686018427387904", "9223372036854775807"])
    if everywhere:
        return re.sub(r"(?<=[<x\[ ,(])" + old + r"(?=[x\]>,)])", new, text), f"dim* {old}->{new}"
    m = rng.choice([s for s in spots if s.group(0) == old])
    return text[:m.start()] + new + text[m.end():], f"dim {old}->{new}"


def mutate_token(text, rng):
    spots = list(TOKEN.finditer(text))
    if not spots:
        return text, "token(none)"
    m = rng.choice(spots)
    if rng.random() < 0.5:
        return text[:m.start()] + text[m.end():], f"del {m.group(0)[:20]!r}"
    return text[:m.end()] + " " + m.group(0) + text[m.end():], f"dup {m.group(0)[:20]!r}"


def mutate_line(text, rng):
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    if rng.random() < 0.5:
        return "".join(lines[:i] + lines[i + 1:]), f"del line {i + 1}"
    return "".join(lines[:i + 1] + [lines[i]] + lines[i + 1:]), f"dup line {i + 1}"


def mutate_truncate(text, rng):
    n = rng.randrange(len(text) + 1)
    return text[:n], f"truncate {n}"


def mutate_bracket(text, rng):
    spots = [i for i, c in enumerate(text) if c in "[({<"]
    closes = [i for i, c in enumerate(text) if c in "])}>"]
    if rng.random() < 0.6 and spots:
        i = rng.choice(spots)
        j = i + 1 + rng.randrange(4)
        return text[:j], f"cut after bracket at {i}"
    if closes:
        i = rng.choice(closes)
        return text[:i] + text[i + 1:], f"del bracket at {i}"
    return mutate_truncate(text, rng)


def mutate_attr(text, rng):
    spots = list(WSC_ATTR.finditer(text))
    if not spots:
        return mutate_token(text, rng)
    m = rng.choice(spots)
    if rng.random() < 0.5:
        return text[:m.start()] + text[m.end():], f"del attr {m.group(0)[:30]!r}"
    name = m.group(0).split("=")[0].strip()
    new = rng.choice(ATTR_NAMES)
    return text[:m.start()] + new + text[m.start() + len(name):], f"rename {name}->{new}"


def mutate_blob(text, rng):
    spots = list(BLOB.finditer(text))
    if not spots:
        return mutate_number(text, rng)
    m = rng.choice(spots)
    hexs = m.group(1)
    choice = rng.randrange(4)
    if choice == 0:
        new = rng.choice(["00000000", "03000000", "FFFFFFFF", "00010000", "40000000"]) + hexs[8:]
    elif choice == 1:
        new = hexs[:rng.randrange(len(hexs) + 1)]
    elif choice == 2:
        new = hexs[:-1] if hexs else hexs
    else:
        new = hexs[:8]
    return text[:m.start(1)] + new + text[m.end(1):], f"blob edit {choice}"


def mutate_nesting(text, rng):
    depth = rng.choice([64, 1000, 10000, 40000])
    spots = [m for m in re.finditer(r"dense<|affine_map<\(", text)]
    if spots and rng.random() < 0.7:
        m = rng.choice(spots)
        if m.group(0) == "dense<":
            inner = "[" * depth + "1.0" + "]" * depth
        else:
            inner = "d0) -> (" + "(" * depth + "d0" + ")" * depth + ")>"
            return text[:m.end()] + inner + text[m.end():], f"nest affine {depth}"
        return text[:m.end()] + inner + text[m.end():], f"nest dense {depth}"
    i = rng.randrange(len(text) + 1)
    return text[:i] + "[" * depth + text[i:], f"nest raw {depth}"


TEXT_MUTATORS = [(mutate_number, 20), (lambda t, r: mutate_dim(t, r, False), 10),
                 (lambda t, r: mutate_dim(t, r, True), 12), (mutate_token, 12), (mutate_line, 6),
                 (mutate_truncate, 4), (mutate_bracket, 6), (mutate_attr, 14), (mutate_blob, 4),
                 (mutate_nesting, 1)]

OPTION_VALUES = {
    "mode": ["auto", "weight_streaming", "layer_pipelined", "", "pipelined", "nan"],
    "systems": ["0", "-1", "1", "2", "3", "300", "nan", "1048576", "1048577", "9223372036854775807",
                "1e9", "", "two", "4x"],
    "target": ["cs2", "tiny", "cs3", "", "TINY"],
    "grid": ["0x0", "1x1", "1x0", "2x2", "3x5", "-1x4", "2147483648x2147483648", "1048576x1048576",
             "2x", "x2", "4", "nanxnan"],
    "stream-dtype": ["f16", "bf16", "f32", "f8", "i64", ""],
    "time-limit": ["nan", "inf", "-1", "0", "1e300", "0.5", "-inf", "2", ""],
    "min-param-elements": ["-5", "0", "1", "4611686018427387904", "nan", "16"],
    "allow-sram-overflow": ["true", "false", "2", ""],
    "offload-activations": ["true", "false", "maybe"],
    "micro-batch": ["none", "auto", "explore", "0", "-1", "1", "3", "300", "4611686018427387904", "nan"],
    "vts": ["on", "off", "auto", "1", "bogus"],
    "bogus-option": ["1"],
}


def parse_options(s):
    out = []
    for part in s.split():
        k, _, v = part.partition("=")
        out.append([k, v, "=" in part])
    return out


def format_options(parts):
    return " ".join(k + ("=" + v if eq else "") for k, v, eq in parts)


def mutate_options(s, rng):
    parts = parse_options(s)
    choice = rng.randrange(10)
    if choice < 6 or not parts:
        key = rng.choice(sorted(OPTION_VALUES))
        val = rng.choice(OPTION_VALUES[key])
        parts = [p for p in parts if p[0] != key] + [[key, val, True]]
        return format_options(parts), f"option {key}={val}"
    if choice < 8:
        parts.pop(rng.randrange(len(parts)))
        return format_options(parts), "option removed"
    text = format_options(parts)
    garbles = ["\"", "=", "}", "{", " =3", "systems", "systems==2", "\\"]
    g = rng.choice(garbles)
    i = rng.randrange(len(text) + 1)
    return text[:i] + g + text[i:], f"option garble {g!r}"


def mutate_json(text, rng):
    try:
        obj = json.loads(text)
    except ValueError:
        return mutate_truncate(text, rng)
    spots = []

    def walk(o, parent, key):
        spots.append((parent, key, o))
        if isinstance(o, dict):
            for k, v in o.items():
                walk(v, o, k)
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, o, i)

    walk(obj, None, None)
    parent, key, value = rng.choice(spots[1:])
    choice = rng.randrange(6)
    if choice < 3 and isinstance(value, (int, float)) and not isinstance(value, bool):
        new = rng.choice([0, -1, 1, 2 ** 31, 2 ** 62, 2 ** 63 - 1, 1e30, 1e300, -1e300, 0.5,
                          float("nan"), float("inf")])
        parent[key] = new
        what = f"json {key}={new}"
    elif choice < 3 and isinstance(value, str):
        parent[key] = rng.choice(["", "f32", "i64", "nan", value + "x", "weight_streaming", "train"])
        what = f"json {key}={parent[key]!r}"
    elif choice == 3 and isinstance(parent, dict):
        del parent[key]
        what = f"json del {key}"
    elif choice == 4 and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(value)))
        what = f"json dup [{key}]"
    elif choice == 4 and isinstance(parent, dict):
        parent[key] = rng.choice([None, [], {}, True, "x", [2 ** 62]])
        what = f"json {key}={parent[key]!r}"
    elif isinstance(parent, list):
        del parent[key]
        what = f"json del [{key}]"
    else:
        return mutate_truncate(text, rng)
    return json.dumps(obj), what


def mutate_bytes(data, rng):
    n = len(data)
    choice = rng.randrange(5)
    if choice == 0:
        return data[:rng.randrange(n + 1)], "bytes truncate"
    if choice == 1:
        hlen = struct.unpack("<Q", data[:8])[0] if n >= 8 else 0
        header = data[8:8 + hlen].decode(errors="replace")
        mutated, what = mutate_number(header, rng) if rng.random() < 0.7 else mutate_token(header, rng)
        raw = mutated.encode()
        return struct.pack("<Q", len(raw)) + raw + data[8 + hlen:], "header " + what
    if choice == 2:
        new = rng.choice([0, 1, 7, 2 ** 32, 2 ** 63, 2 ** 64 - 1])
        return struct.pack("<Q", new) + data[8:], f"header length {new}"
    if choice == 3:
        i = rng.randrange(max(n, 1))
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1:], "byte flip"
    i = rng.randrange(max(n - 3, 1))
    val = rng.choice([b"\x00\x00\xc0\x7f", b"\x00\x00\x80\x7f", b"\xff\xff\xff\xff"])
    return data[:i] + val + data[i + 4:], "nan/inf bytes"
