#!/usr/bin/env python3
"""Renders prompt-style templates with Jinja2 itself, under its defaults and the
whitespace settings apps turn on, and writes what it rendered to
tests/data/jinja2/recordings.json. The library's jinja tests hold each rendering to
the template read under the same settings, and each one-character literal mutant to
a refusal; `cargo test` reads the committed file and needs no Python.

    pip install jinja2==3.1.6 && python3 scripts/record-jinja2.py
"""

import json
import pathlib

import jinja2

TEMPLATES = {
    "chooser/system": "You are a helpful assistant that can interact with a computer.\n\n"
    "Your response must contain exactly ONE bash code block.\n",
    "chooser/instance": "<uploaded_files>\n{{working_dir}}\n</uploaded_files>\n"
    "I've uploaded a python code repository in the directory {{working_dir}}.\n\n"
    "<pr_description>\n{{problem_statement}}\n</pr_description>\n\n"
    "{% if tips %}\nTips:\n{% for tip in tips %}\n  - {{ tip }}\n{% endfor %}\n{% endif %}\n"
    "Follow these steps to resolve the issue.\n",
    "next_step": "{% if output|length == 0 %}\nYour command ran successfully and did not produce any output.\n"
    "{% else %}\nOBSERVATION:\n{{ output }}\n{% endif %}\n",
    "indented": "Rules:\n    {% for rule in rules %}\n    * {{ rule }}\n    {% endfor %}\nEnd.",
    "comments": "{# the header #}\nHello {{ name }}!\n  {# an indented comment #}\nBye.\n",
    "modifiers": "A  {%- if x -%}  tight  {%- endif %}  B\n    {%+ if x %}kept{% endif +%}\nC {{- name -}} D\n",
    "crlf": "Line one\r\n{% if x %}\r\nYes {{ name }}\r\n{% endif %}\r\nLast\r\n",
    "for_else": "Items: {% for i in items %}[{{ i }}]{% else %}none{% endfor %}.\n\n",
    "no_final_newline": "Ask: {{ question }}",
    "two_final_newlines": "Answer {{ question }}\n\n",
}

DATA = [
    {
        "working_dir": "/testbed",
        "problem_statement": "Fix `{{ x }}` and {% raw %}\r\nin the parser.\nSecond line: ünïcödé ✓",
        "tips": ["Run the tests", "Keep {% it %} small"],
        "output": "",
        "rules": ["be brief", "cite {{sources}}"],
        "name": "Ada",
        "x": True,
        "items": ["a", "b"],
        "question": "What is 6 × 7?\n",
    },
    {
        "working_dir": "/work space",
        "problem_statement": "",
        "tips": [],
        "output": "line 1\nline 2\n",
        "rules": [],
        "name": "",
        "x": False,
        "items": [],
        "question": "",
    },
]

SETTINGS = [
    {"trim_blocks": False, "lstrip_blocks": False, "keep_trailing_newline": False},
    {"trim_blocks": True, "lstrip_blocks": False, "keep_trailing_newline": False},
    {"trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": False},
    {"trim_blocks": False, "lstrip_blocks": True, "keep_trailing_newline": True},
    {"trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": True},
]


def main():
    recordings = []
    for name, source in TEMPLATES.items():
        for settings in SETTINGS:
            # Jinja2 turns every newline of the template into "\n" unless told to keep
            # them: apps keep "\r\n" templates' own newlines only by newline_sequence.
            newline = "\r\n" if name == "crlf" else "\n"
            env = jinja2.Environment(undefined=jinja2.StrictUndefined, newline_sequence=newline, **settings)
            template = env.from_string(source)
            for data in DATA:
                recordings.append(
                    {
                        "template": name,
                        "source": source,
                        "settings": settings,
                        "data": data,
                        "rendering": template.render(**data),
                    }
                )
    out = pathlib.Path(__file__).resolve().parent.parent / "tests/data/jinja2/recordings.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    document = {"jinja2": jinja2.__version__, "recordings": recordings}
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(recordings)} renderings by Jinja2 {jinja2.__version__} written to {out}")


if __name__ == "__main__":
    main()
