"""The app's prompts: three str.format templates, and which of them a call renders.

This is the app's own code (what production calls); export_packet.py only wraps it
in the packet format packetproof checks.
"""

from pathlib import Path

PROMPTS = Path(__file__).parent / "prompts"


def template(name: str) -> str:
    return (PROMPTS / name).read_text(encoding="utf-8")


def render(request: dict) -> tuple[list[str], str, str]:
    """The prompt files a request renders, its system prompt and its user message."""
    follow_up = "previousAnswer" in request
    user_template = "followup.txt" if follow_up else "reply.txt"
    values = {key: request[key] for key in ("customerName", "question", "previousAnswer", "tone") if key in request}
    system = template("system.txt").format(**values)
    user = template(user_template).format(**values)
    return ["system.txt", user_template], system, user
