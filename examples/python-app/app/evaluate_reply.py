"""packetproof's evaluator for the app's plain-text replies: one answer in, one verdict out.

Run as `python3 app/evaluate_reply.py PACKET.json OUTPUT` (harness.toml [evaluator]);
prints the verdict (the evaluation document packetproof reads) on stdout and exits 1
when the reply fails. The rules are the app's own, from its system prompt:
  reply     the answer is UTF-8 text with something in it;
  greeting  it addresses the customer by their first name;
  length    at most three paragraphs (blocks of text between blank lines);
  promises  it promises no refund, date or feature ("we will refund", "guarantee", …).
examples/python-app/rust_evaluator.rs is the same evaluator in Rust: the two print the
same verdicts, so the suite is tested where Python is absent.
"""

import json
import sys

PROMISES = ("refund you", "we will refund", "guarantee", "i promise", "will be available by")


def judge(packet: dict, answer: bytes) -> list:
    try:
        text = answer.decode("utf-8")
    except UnicodeDecodeError:
        return [{"stage": "reply", "message": "the reply is not UTF-8 text"}]
    if not text.strip():
        return [{"stage": "reply", "message": "the reply is empty"}]
    failures = []
    first_name = packet["renderInput"]["customerName"].split()[0]
    if first_name not in text:
        failures.append({"stage": "greeting", "message": f"the reply does not address {first_name} by name"})
    paragraphs = [block for block in text.replace("\r\n", "\n").split("\n\n") if block.strip()]
    if len(paragraphs) > 3:
        failures.append({"stage": "length", "message": f"{len(paragraphs)} paragraphs; at most 3"})
    lower = text.lower()
    for phrase in PROMISES:
        if phrase in lower:
            failures.append({"stage": "promises", "message": f"the reply promises what support cannot: {phrase!r}"})
    return failures


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        packet = json.load(f)
    with open(sys.argv[2], "rb") as f:
        answer = f.read()
    failures = judge(packet, answer)
    print(json.dumps({"ok": not failures, "failures": failures}, indent=2, ensure_ascii=False))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
