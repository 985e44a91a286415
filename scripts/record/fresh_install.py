"""What a fresh install of an instrumentation exports of one call (scripts/record/fresh-install.sh):
the versions pip picks today, content capture on, the exporter writing OTLP/JSON to
OUT/{case}.jsonl. A case whose instrumentation fails prints why and exports nothing.

argv: PORT BODIES_DIR OUT_DIR CASE. Every request goes to the capture server on 127.0.0.1.
"""
import json
import os
import sys

from otlp_file import span_exporter

PORT, BODIES, OUT, CASE = sys.argv[1:5]
BASE = f"http://127.0.0.1:{PORT}"


def body(api):
    with open(f"{BODIES}/{api}.json", encoding="utf-8") as f:
        return json.load(f)


def main():
    os.environ.update({"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                       "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"})
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    path = f"{OUT}/{CASE}.jsonl"
    if os.path.exists(path):
        os.remove(path)
    open(path, "w").close()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(span_exporter(path)))
    trace.set_tracer_provider(provider)
    try:
        if CASE == "openai-v2":
            from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

            OpenAIInstrumentor().instrument()
            import openai

            b = body("openai-chat")
            openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0).chat.completions.create(
                model=b["model"], max_completion_tokens=b["max_completion_tokens"], messages=b["messages"])
        elif CASE == "google-genai":
            from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor

            GoogleGenAiSdkInstrumentor().instrument()
            from google import genai
            from google.genai import types

            b = body("gemini")
            client = genai.Client(api_key="dummy", http_options=types.HttpOptions(base_url=BASE))
            client.models.generate_content(
                model="gemini-2.5-flash", contents=b["contents"][0]["parts"][0]["text"],
                config=types.GenerateContentConfig(system_instruction=b["systemInstruction"]["parts"][0]["text"]))
    except Exception as error:
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
    provider.force_flush()


if __name__ == "__main__":
    main()
