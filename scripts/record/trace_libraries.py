"""Record what other GenAI instrumentation libraries export of the same OpenAI call
(scripts/record/record-libraries.sh): OTLP/JSON, one export per line, spans in
{scenario}.{exact|drift}.jsonl and log records in {scenario}.{exact|drift}.logs.jsonl; and
the same exports as OTLP protobuf, as the SDK's OTLP/HTTP exporter sends them
({scenario}.{exact|drift}.pb and .logs.pb: the exports back to back, which protobuf
reads as one).

The exact call sends the reviewed packet's request (tests/recordings/sdk/packets/openai.json,
as `packetproof wire --api openai-chat` builds it); the drifted call changes one word of
its system prompt. Content capture is on. Every request goes to the capture server on
127.0.0.1 (a dummy API key); nothing reaches a provider.

argv: PORT BODIES_DIR OUT_DIR [SCENARIO]. Each scenario runs in its own process and venv
(PACKETPROOF_LIB_PYTHON_<KIND>), as the libraries pin different OpenTelemetry versions.
"""
import json
import os
import subprocess
import sys

from otlp_file import log_exporter, span_exporter

PORT, BODIES, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
BASE = f"http://127.0.0.1:{PORT}"

# scenario: (kind, environment, streamed)
SCENARIOS = {
    "openinference-openai": ("openinference", {}, False),
    "logfire": ("logfire", {}, True),
    "logfire-v1": ("logfire", {"PACKETPROOF_LOGFIRE_VERSION": "1"}, True),
    "langfuse-openai": ("langfuse", {}, False),
    "litellm": ("litellm", {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}, False),
    "litellm-responses": ("litellm", {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PACKETPROOF_LITELLM_API": "responses"}, False),
    "openllmetry-openai.events": ("openllmetry", {"TRACELOOP_TRACE_CONTENT": "true",
                                                  "PACKETPROOF_OPENLLMETRY_EVENTS": "1"}, False),
    "openllmetry-openai.attributes": ("openllmetry", {"TRACELOOP_TRACE_CONTENT": "true"}, False),
}


def body():
    with open(f"{BODIES}/openai-chat.json", encoding="utf-8") as f:
        return json.load(f)


def drifted(system):
    """The system prompt with one word changed."""
    for old, new in ((" the ", " a "), (" a ", " the "), (" and ", " or ")):
        if old in system:
            return system.replace(old, new, 1)
    return system + " Be brief."


def calls():
    """(mode, messages) of the exact and the drifted call."""
    b = body()
    system, user = b["messages"][0]["content"], b["messages"][1]["content"]
    return [(mode, [{"role": "system", "content": s}, {"role": "user", "content": user}])
            for mode, s in (("exact", system), ("drift", drifted(system)))]


def chat(client, messages, stream):
    b = body()
    result = client.chat.completions.create(model=b["model"], max_completion_tokens=b["max_completion_tokens"],
                                            messages=messages, response_format=b["response_format"], stream=stream)
    if stream:
        for _ in result:
            pass


def run(scenario):
    kind, _, stream = SCENARIOS[scenario]
    from opentelemetry import trace
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    # One processor per call: each call's records go to its own pair of files.
    paths = {}
    for mode, _ in calls():
        paths[mode] = (f"{OUT}/{scenario}.{mode}.jsonl", f"{OUT}/{scenario}.{mode}.logs.jsonl")
        for old in paths[mode]:
            for each in (old, old[: -len(".jsonl")] + ".pb"):
                if os.path.exists(each):
                    os.remove(each)
    current = {"mode": "exact"}

    class Switch:
        def __init__(self, make, index):
            self.exporters = {mode: make(p[index]) for mode, p in paths.items()}

        def export(self, batch):
            return self.exporters[current["mode"]].export(batch)

        def shutdown(self):
            pass

        def force_flush(self, timeout_millis=30000):
            return True

    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.sdk._logs.export import LogRecordExporter

    class SpanSwitch(Switch, SpanExporter):
        pass

    class LogSwitch(Switch, LogRecordExporter):
        pass

    span_processor = SimpleSpanProcessor(SpanSwitch(lambda path: span_exporter(path, protobuf=True), 0))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(LogSwitch(lambda path: log_exporter(path, protobuf=True), 1)))
    set_logger_provider(logger_provider)

    import openai

    if kind == "logfire":
        import logfire
        logfire.configure(send_to_logfire=False, console=False, metrics=False, inspect_arguments=False,
                          additional_span_processors=[span_processor])
        client = openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0)
        logfire.instrument_openai(client, version=int(os.environ.get("PACKETPROOF_LOGFIRE_VERSION", "2")))
    else:
        provider = TracerProvider()
        provider.add_span_processor(span_processor)
        trace.set_tracer_provider(provider)
        if kind == "openinference":
            from openinference.instrumentation.openai import OpenAIInstrumentor
            OpenAIInstrumentor().instrument(tracer_provider=provider)
        elif kind == "openllmetry":
            from opentelemetry.instrumentation.openai import OpenAIInstrumentor
            events = os.environ.get("PACKETPROOF_OPENLLMETRY_EVENTS") == "1"
            OpenAIInstrumentor(use_legacy_attributes=not events).instrument()
        elif kind == "langfuse":
            from langfuse import Langfuse
            # Langfuse's own exporter goes to a closed port; the spans reach ours.
            Langfuse(public_key="pk-lf-record", secret_key="sk-lf-record", host="http://127.0.0.1:9",
                     tracer_provider=provider)
            from langfuse.openai import openai  # noqa: F811 (the drop-in client)
        client = openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0)

    for mode, messages in calls():
        current["mode"] = mode
        if kind == "litellm":
            litellm_call(messages)
        else:
            chat(client, messages, stream)
        if kind == "langfuse":
            from langfuse import get_client
            get_client().flush()
    logger_provider.shutdown()
    for mode in paths:
        for path in paths[mode]:
            for each in (path, path[: -len(".jsonl")] + ".pb"):
                if os.path.exists(each) and os.path.getsize(each) == 0:
                    os.remove(each)


def litellm_call(messages):
    import litellm
    from litellm.integrations.opentelemetry import OpenTelemetry, OpenTelemetryConfig
    from opentelemetry import trace

    if not getattr(litellm_call, "ready", False):
        provider = trace.get_tracer_provider()
        litellm.callbacks = [OpenTelemetry(config=OpenTelemetryConfig(exporter="console"),
                                           tracer_provider=provider)]
        litellm_call.ready = True
    b = body()
    if os.environ.get("PACKETPROOF_LITELLM_API") == "responses":
        with open(f"{BODIES}/openai-responses.json", encoding="utf-8") as f:
            r = json.load(f)
        litellm.responses(model=f"openai/{r['model']}", api_base=f"{BASE}/v1", api_key="dummy",
                          instructions=messages[0]["content"], input=r["input"],
                          max_output_tokens=r["max_output_tokens"], text=r["text"])
    else:
        litellm.completion(model=f"openai/{b['model']}", api_base=f"{BASE}/v1", api_key="dummy", messages=messages,
                           max_completion_tokens=b["max_completion_tokens"], response_format=b["response_format"])
    import time
    time.sleep(1)  # LiteLLM logs success in a thread


if __name__ == "__main__":
    if len(sys.argv) > 4:
        run(sys.argv[4])
    else:
        only = os.environ.get("PACKETPROOF_LIB_SCENARIOS", "").split()
        for name, (kind, env, _) in SCENARIOS.items():
            if only and name not in only:
                continue
            python = os.environ.get(f"PACKETPROOF_LIB_PYTHON_{kind.upper()}", sys.executable)
            result = subprocess.run([python, __file__, PORT, BODIES, OUT, name], env={**os.environ, **env})
            print(f"{name}: exit {result.returncode}", file=sys.stderr)
