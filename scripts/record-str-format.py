#!/usr/bin/env python3
"""Renders str.format fields with Python itself, over conversions and format specs
apps write and values of each kind, and writes what it rendered to
tests/data/str-format/recordings.json. The library's format-spec tests hold each
rendering to the field's pattern, and each rendering with a character changed that
Python could not have written there to a refusal; `cargo test` reads the committed
file and needs no Python.

    python3 scripts/record-str-format.py
"""

import json
import pathlib
import platform

FIELDS = [
    ("", ["Ada", "", "two\nlines", 42, 3.5, -7, True, None, "<b>&'\""]),
    ("!r", ["Ada", "it's", 'say "hi"', "two\nlines\ttab", "", 42, ["a", 1], None, "é✓\u2028"]),
    ("!a", ["Ada", "é✓", "two\nlines", 42]),
    ("!s", ["Ada", 42]),
    (":.3", ["Ada Lovelace", "ab", "", 3.14159, 123456.0, 0.000123456, -2.5e-9, float("inf")]),
    (":s", ["Ada", ""]),
    (":.5s", ["Ada Lovelace", "abc"]),
    (":>8", ["ab", "abcdefghij", 42, 3.5, ""]),
    (":<6", ["ab", 7]),
    (":^9", ["mid", 1.25]),
    (":*>10", ["pad", 12]),
    (":>8.2", ["abcdef", 3.14159]),
    (":8.2s", ["abcdef", "a"]),
    (":d", [0, 42, -1234567, True]),
    (":,d", [1234567, -12]),
    (":_d", [1234567]),
    (":+d", [5, -5]),
    (":05d", [42, -42, 1234567]),
    (":>6d", [42, -7, 1234567]),
    (":x", [255, -255]),
    (":#x", [255]),
    (":X", [48879]),
    (":#o", [8]),
    (":b", [5]),
    (":c", [65, 10]),
    (":f", [3.5, -0.000001, 1e20, float("nan")]),
    (":.2f", [3.14159, 1234.5, -0.004, 0]),
    (":,.2f", [1234567.891, -12.3]),
    (":.0f", [2.5, 3.5]),
    (":#.0f", [2.0]),
    (":10.3f", [3.14159, -123456.789]),
    (":e", [12345.678, 0.0]),
    (":.2E", [0.000123]),
    (":g", [12345.678, 1e-7, 100.0]),
    (":.3g", [3.14159, 1234567.0]),
    (":%", [0.25]),
    (":.1%", [0.12345, 1.0]),
    (":+.1f", [2.25, -2.25]),
    (": d", [5]),
    (":=+8.2f", [-3.14159]),
]


def main():
    recordings = []
    for spec, values in FIELDS:
        conversion, format_spec = "", ""
        if spec.startswith("!"):
            conversion = spec[1]
        elif spec.startswith(":"):
            format_spec = spec[1:]
        for value in values:
            template = "{v" + spec + "}"
            recordings.append(
                {
                    "conversion": conversion or None,
                    "spec": format_spec,
                    "value": repr(value),
                    "rendering": template.format(v=value),
                }
            )
    out = pathlib.Path(__file__).resolve().parent.parent / "tests/data/str-format/recordings.json"
    out.write_text(json.dumps({"python": platform.python_version(), "recordings": recordings}, ensure_ascii=False, indent=1) + "\n")
    print(f"{len(recordings)} renderings written to {out}")


main()
