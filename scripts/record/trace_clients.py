"""Record the traces the official OpenTelemetry GenAI instrumentations make of the SDK
calls (scripts/record/record.sh): OTLP/JSON as the Collector's file exporter writes it,
one ExportTraceServiceRequest per line.

argv: PORT BODIES_DIR OUT_DIR. Each scenario runs in its own process (instrumentation
settings are read when a library is instrumented): `trace_clients.py PORT BODIES OUT
SCENARIO` runs one; with no SCENARIO every scenario runs.

The exporter is the OTLP protobuf encoding (opentelemetry-exporter-otlp-proto-common)
mapped to JSON by protobuf's json_format, with the OTLP/JSON differences applied: trace
and span ids as hex, enums as integers, 64-bit integers as strings (json_format's own).
"""
import json
import os
import subprocess
import sys

from otlp_file import log_exporter, span_exporter

PORT, BODIES, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
BASE = f"http://127.0.0.1:{PORT}"

# scenario: (instrumentation, environment, what the calls do)
SCENARIOS = {
    "openai-v2.content-on-spans": ("openai", {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                                              "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}),
    "openai-v2.no-content": ("openai", {}),
    # Content as events: OpenTelemetry events are log records, exported beside the spans
    # ({scenario}.logs.jsonl): the v1.37+ gen_ai.client.inference.operation.details event.
    # (openai-v2 no longer sends the older per-message events: `true` is refused as a mode.)
    "openai-v2.content-as-events": ("openai", {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                                               "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY"}),
    "google-genai.content-on-spans": ("google", {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                                                 "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}),
    "google-genai.no-content": ("google", {}),
    # opentelemetry-instrumentation-anthropic, with the SDK's own telemetry on (its default:
    # a second span per call, without content).
    "anthropic.content": ("anthropic", {"TRACELOOP_TRACE_CONTENT": "true"}),
    "anthropic.no-content": ("anthropic", {"TRACELOOP_TRACE_CONTENT": "false"}),
    # The anthropic SDK's own OpenTelemetry spans, content on.
    "anthropic-sdk.content": ("anthropic-sdk", {"ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE": "content"}),
}


def body(api):
    with open(f"{BODIES}/{api}.json", encoding="utf-8") as f:
        return json.load(f)


def run(scenario):
    kind, _ = SCENARIOS[scenario]
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from opentelemetry._logs import set_logger_provider
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    path, logs = f"{OUT}/{scenario}.jsonl", f"{OUT}/{scenario}.logs.jsonl"
    for old in (path, logs):
        if os.path.exists(old):
            os.remove(old)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(span_exporter(path)))
    trace.set_tracer_provider(provider)
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter(logs)))
    set_logger_provider(logger_provider)
    {"openai": openai_calls, "google": google_calls, "anthropic": anthropic_calls,
     "anthropic-sdk": lambda: anthropic_calls(instrument=False)}[kind]()
    provider.shutdown()
    logger_provider.shutdown()
    if not os.path.exists(logs):
        return
    if os.path.getsize(logs) == 0:
        os.remove(logs)


# Each instrumentation sees five calls: the reviewed packet as is (matched), its user
# text edited (unreviewed), its token limit changed and its model changed (mismatched),
# and streamed (matched).
OTHER_MODEL = {"gpt-5": "gpt-5-mini", "claude-sonnet-4-5": "claude-haiku-4-5", "gemini-2.5-flash": "gemini-2.5-pro"}


def variants(model, user, tokens):
    return [(model, user, tokens, False), (model, user + " Also add a bonus screen.", tokens, False),
            (model, user, tokens // 2, False), (OTHER_MODEL[model], user, tokens, False), (model, user, tokens, True)]


def openai_calls():
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    OpenAIInstrumentor().instrument()
    import openai
    client = openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0)
    b = body("openai-chat")
    system, user = b["messages"][0]["content"], b["messages"][1]["content"]
    for model, text, tokens, stream in variants(b["model"], user, b["max_completion_tokens"]):
        messages = [{"role": "system", "content": system}, {"role": "user", "content": text}]
        result = client.chat.completions.create(model=model, max_completion_tokens=tokens, messages=messages,
                                                response_format=b["response_format"], stream=stream)
        if stream:
            for _ in result:
                pass


def google_calls():
    from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor
    GoogleGenAiSdkInstrumentor().instrument()
    from google import genai
    from google.genai import types
    client = genai.Client(api_key="dummy", http_options=types.HttpOptions(base_url=BASE))
    b = body("gemini")
    with open(f"{BODIES}/gemini.model", encoding="utf-8") as f:
        model = f.read().strip()
    system = b["systemInstruction"]["parts"][0]["text"]
    user = b["contents"][0]["parts"][0]["text"]
    for model, text, tokens, stream in variants(model, user, b["generationConfig"]["maxOutputTokens"]):
        config = types.GenerateContentConfig(system_instruction=system, max_output_tokens=tokens,
                                             response_mime_type="application/json")
        if stream:
            for _ in client.models.generate_content_stream(model=model, contents=text, config=config):
                pass
        else:
            client.models.generate_content(model=model, contents=text, config=config)


def anthropic_calls(instrument=True):
    if instrument:
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
        AnthropicInstrumentor().instrument()
    import anthropic
    client = anthropic.Anthropic(base_url=BASE, api_key="dummy", max_retries=0)
    b = body("anthropic")
    user = b["messages"][0]["content"]
    for model, text, tokens, stream in variants(b["model"], user, b["max_tokens"]):
        kwargs = dict(model=model, max_tokens=tokens, system=b["system"],
                      messages=[{"role": "user", "content": text}], tools=b["tools"], tool_choice=b["tool_choice"])
        if stream:
            with client.messages.stream(**kwargs) as s:
                s.until_done()
        else:
            client.messages.create(**kwargs, timeout=900)


if __name__ == "__main__":
    if len(sys.argv) > 4:
        run(sys.argv[4])
    else:
        for name, (kind, env) in SCENARIOS.items():
            # The instrumentations pin incompatible versions of opentelemetry-util-genai and
            # google-genai: openai-v2 and google-genai each run in their own venv (record.sh).
            python = os.environ.get(f"PACKETPROOF_OTEL_PYTHON_{kind.upper().replace('-', '_')}", sys.executable)
            subprocess.run([python, __file__, PORT, BODIES, OUT, name], env={**os.environ, **env}, check=True)
