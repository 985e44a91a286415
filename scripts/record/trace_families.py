"""Record what six more GenAI instrumentation families export of the same call
(scripts/record/record-families.sh): OpenLIT, Semantic Kernel (its GenAI diagnostics, its
logs bridged to OpenTelemetry), pydantic-ai, MLflow tracing (its default format and its
GenAI-conventions switch) and OpenLLMetry's anthropic instrumentation in events mode.

Each scenario records three calls, each in its own process (the libraries read their
content switch once): `exact` sends the reviewed packet's request
(tests/recordings/sdk/packets/openai.json, or anthropic.json for the anthropic one, as
`packetproof wire` builds it), `drift` changes one word of its system prompt, and
`no-content` is the exact call with the library's content switch off. Spans go to
{scenario}.{mode}.jsonl, log records to {scenario}.{mode}.logs.jsonl (OTLP/JSON, one
export per line), and the protobuf the SDK exporter sends beside them (.pb, .logs.pb).
Every request goes to the capture server on 127.0.0.1 (a dummy API key); nothing reaches
a provider.

argv: PORT BODIES_DIR OUT_DIR [SCENARIO MODE]. Each scenario runs in its own venv
(PACKETPROOF_LIB_PYTHON_<KIND>), as the libraries pin different OpenTelemetry versions.
"""
import json
import os
import subprocess
import sys
import threading

from otlp_file import append_otlp_json, log_exporter, span_exporter

PORT, BODIES, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
BASE = f"http://127.0.0.1:{PORT}"
MODES = ("exact", "drift", "no-content")

# scenario: (kind, api body, streamed, environment with content on, environment with content off)
SCENARIOS = {
    "openlit-openai": ("openlit", "openai-chat", True, {}, {"PACKETPROOF_CONTENT": "0"}),
    "semantic-kernel-openai": (
        "semantic_kernel", "openai-chat", False,
        {"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS": "true",
         "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true"},
        {"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS": "true",
         "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "false"}),
    "pydantic-ai-openai": ("pydantic_ai", "openai-chat", False, {}, {"PACKETPROOF_CONTENT": "0"}),
    "mlflow-openai": ("mlflow", "openai-chat", False, {}, None),
    "mlflow-openai.genai-semconv": ("mlflow", "openai-chat", False, {"MLFLOW_ENABLE_OTEL_GENAI_SEMCONV": "true"}, None),
    "openllmetry-anthropic.events": ("openllmetry_anthropic", "anthropic", False, {"TRACELOOP_TRACE_CONTENT": "true"},
                                     {"TRACELOOP_TRACE_CONTENT": "false"}),
    "openlit-openai.plain": ("openlit", "openai-chat", False, {}, {"PACKETPROOF_CONTENT": "0"}),
    # max_content_length: OpenLIT cuts each text after 300 characters and appends "...".
    "openlit-openai.cut": ("openlit", "openai-chat", False, {"PACKETPROOF_MAX_CONTENT": "300"}, None),
    "langsmith-openai": ("langsmith", "openai-chat", False, {}, {"LANGSMITH_HIDE_INPUTS": "true"}),
    "haystack-openai": ("haystack", "openai-chat", False, {"HAYSTACK_CONTENT_TRACING_ENABLED": "true"},
                        {"HAYSTACK_CONTENT_TRACING_ENABLED": "false"}),
    "openai-agents-v2.responses": ("openai_agents", "openai-responses", False,
                                   {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
                                   {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "no_content"}),
    "strands-openai": ("strands", "openai-chat", False, {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"},
                       {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental,gen_ai_unredacted_attributes="}),
    "strands-openai.legacy": ("strands", "openai-chat", False, {"OTEL_SEMCONV_STABILITY_OPT_IN": ""},
                              {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_unredacted_attributes="}),
}


def body(api):
    with open(f"{BODIES}/{api}.json", encoding="utf-8") as f:
        return json.load(f)


def drifted(system):
    """The system prompt with one word changed."""
    for old, new in ((" the ", " a "), (" a ", " the "), (" and ", " or ")):
        if old in system:
            return system.replace(old, new, 1)
    return system + " Be brief."


def texts(api, mode):
    """The (system, user) texts of the call in `mode`."""
    b = body(api)
    if api == "anthropic":
        system, user = b["system"], b["messages"][0]["content"]
    elif api == "openai-responses":
        system, user = b["instructions"], b["input"][0]["content"]
    else:
        system, user = b["messages"][0]["content"], b["messages"][1]["content"]
    return (drifted(system) if mode == "drift" else system), user


def paths(scenario, mode):
    spans, logs = f"{OUT}/{scenario}.{mode}.jsonl", f"{OUT}/{scenario}.{mode}.logs.jsonl"
    for path in (spans, logs):
        for each in (path, path[: -len(".jsonl")] + ".pb"):
            if os.path.exists(each):
                os.remove(each)
    return spans, logs


def providers(spans, logs):
    """The global tracer and logger providers, exporting each record as it ends."""
    from opentelemetry import trace
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter(spans, protobuf=True)))
    trace.set_tracer_provider(tracer_provider)
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter(logs, protobuf=True)))
    set_logger_provider(logger_provider)
    return tracer_provider, logger_provider


def openai_chat(client, system, user, stream):
    b = body("openai-chat")
    result = client.chat.completions.create(
        model=b["model"], max_completion_tokens=b["max_completion_tokens"],
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        response_format=b["response_format"], stream=stream)
    if stream:
        for _ in result:
            pass


def run_openlit(system, user, stream, spans, logs):
    tracer_provider, logger_provider = providers(spans, logs)
    import openai
    import openlit

    cut = os.environ.get("PACKETPROOF_MAX_CONTENT")
    openlit.init(capture_message_content=os.environ.get("PACKETPROOF_CONTENT") != "0", disable_metrics=True,
                 disable_batch=True, max_content_length=int(cut) if cut else None)
    openai_chat(openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0), system, user, stream)
    return tracer_provider, logger_provider


def run_semantic_kernel(system, user, stream, spans, logs):
    import asyncio
    import logging

    tracer_provider, logger_provider = providers(spans, logs)
    from opentelemetry.sdk._logs import LoggingHandler

    # Semantic Kernel's diagnostics log each message through Python's logging: bridged here.
    handler = LoggingHandler(level=logging.INFO, logger_provider=logger_provider)
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    from openai import AsyncOpenAI
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings
    from semantic_kernel.contents import ChatHistory

    b = body("openai-chat")
    service = OpenAIChatCompletion(ai_model_id=b["model"],
                                   async_client=AsyncOpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0))
    history = ChatHistory(system_message=system)
    history.add_user_message(user)
    settings = OpenAIChatPromptExecutionSettings(max_completion_tokens=b["max_completion_tokens"])
    asyncio.run(service.get_chat_message_contents(history, settings))
    return tracer_provider, logger_provider


def run_pydantic_ai(system, user, stream, spans, logs):
    tracer_provider, logger_provider = providers(spans, logs)
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    b = body("openai-chat")
    model = OpenAIChatModel(b["model"], provider=OpenAIProvider(base_url=f"{BASE}/v1", api_key="dummy"))
    settings = InstrumentationSettings(include_content=os.environ.get("PACKETPROOF_CONTENT") != "0",
                                       tracer_provider=tracer_provider)
    Agent.instrument_all(settings)
    agent = Agent(model, system_prompt=system, model_settings={"max_tokens": b["max_completion_tokens"]})
    agent.run_sync(user)
    return tracer_provider, logger_provider


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1 that appends each protobuf export to a file
    (MLflow exports with its own tracer provider, to the endpoint it is given)."""

    def __init__(self, spans):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                append_otlp_json(spans, ExportTraceServiceRequest.FromString(data), protobuf=True)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"


def run_mlflow(system, user, stream, spans, logs):
    receiver = Receiver(spans)
    os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = receiver.endpoint
    os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
    import mlflow
    import openai

    mlflow.openai.autolog()
    openai_chat(openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0), system, user, stream)
    from mlflow.tracing.provider import provider as mlflow_provider

    exporting = mlflow_provider.get()
    if exporting is None:
        raise SystemExit("MLflow recorded no trace")
    exporting.force_flush()
    return None, None


def run_openllmetry_anthropic(system, user, stream, spans, logs):
    tracer_provider, logger_provider = providers(spans, logs)
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor(use_attributes=False).instrument()
    import anthropic

    b = body("anthropic")
    client = anthropic.Anthropic(base_url=BASE, api_key="dummy", max_retries=0)
    client.messages.create(model=b["model"], max_tokens=b["max_tokens"], system=system,
                           messages=[{"role": "user", "content": user}], tools=b["tools"],
                           tool_choice=b["tool_choice"], timeout=60)
    return tracer_provider, logger_provider


def run_langsmith(system, user, stream, spans, logs):
    # OpenTelemetry mode only: with the global provider set, LangSmith's exporter writes
    # its runs as spans to it, and nothing goes to LangSmith's own endpoint.
    os.environ.update({"LANGSMITH_TRACING": "true", "LANGSMITH_TRACING_MODE": "otel", "LANGSMITH_API_KEY": "dummy",
                       "LANGSMITH_ENDPOINT": BASE})
    tracer_provider, logger_provider = providers(spans, logs)
    import openai
    from langsmith import Client
    from langsmith.run_helpers import tracing_context
    from langsmith.wrappers import wrap_openai

    client = Client()
    with tracing_context(client=client, enabled=True):
        openai_chat(wrap_openai(openai.OpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0)), system, user,
                    stream)
    client.flush()
    return tracer_provider, logger_provider


def run_haystack(system, user, stream, spans, logs):
    tracer_provider, logger_provider = providers(spans, logs)
    from haystack import Pipeline, tracing
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.dataclasses import ChatMessage
    from haystack.utils import Secret
    from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer

    tracing.enable_tracing(OpenTelemetryTracer(tracer_provider.get_tracer("haystack")))
    b = body("openai-chat")
    generator = OpenAIChatGenerator(api_key=Secret.from_token("dummy"), model=b["model"], api_base_url=f"{BASE}/v1",
                                    generation_kwargs={"max_completion_tokens": b["max_completion_tokens"]},
                                    max_retries=0)
    pipeline = Pipeline()
    pipeline.add_component("llm", generator)
    pipeline.run({"llm": {"messages": [ChatMessage.from_system(system), ChatMessage.from_user(user)]}})
    return tracer_provider, logger_provider


def run_openai_agents(system, user, stream, spans, logs):
    tracer_provider, logger_provider = providers(spans, logs)
    import agents
    from openai import AsyncOpenAI
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    # No processor but the instrumentation's: the SDK's own exporter would send the
    # traces to OpenAI.
    agents.set_trace_processors([])
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider)
    b = body("openai-responses")
    client = AsyncOpenAI(base_url=f"{BASE}/v1", api_key="dummy", max_retries=0)
    model = agents.OpenAIResponsesModel(model=b["model"], openai_client=client)
    agent = agents.Agent(name="adapter", instructions=system, model=model,
                         model_settings=agents.ModelSettings(max_tokens=b["max_output_tokens"]))
    agents.Runner.run_sync(agent, user)
    from agents.tracing import get_trace_provider

    get_trace_provider().force_flush()
    return tracer_provider, logger_provider


def run_strands(system, user, stream, spans, logs):
    tracer_provider, logger_provider = providers(spans, logs)
    from strands import Agent
    from strands.models.openai import OpenAIModel

    b = body("openai-chat")
    model = OpenAIModel(client_args={"base_url": f"{BASE}/v1", "api_key": "dummy", "max_retries": 0},
                        model_id=b["model"], params={"max_completion_tokens": b["max_completion_tokens"]})
    Agent(model=model, system_prompt=system, callback_handler=None)(user)
    return tracer_provider, logger_provider


def run(scenario, mode):
    kind, api, stream, _, _ = SCENARIOS[scenario]
    spans, logs = paths(scenario, mode)
    system, user = texts(api, mode)
    tracer_provider, logger_provider = globals()[f"run_{kind}"](system, user, stream, spans, logs)
    for provider in (tracer_provider, logger_provider):
        if provider is not None:
            provider.force_flush()
            provider.shutdown()
    for path in (spans, logs):
        for each in (path, path[: -len(".jsonl")] + ".pb"):
            if os.path.exists(each) and os.path.getsize(each) == 0:
                os.remove(each)


if __name__ == "__main__":
    if len(sys.argv) > 5:
        run(sys.argv[4], sys.argv[5])
    else:
        only = os.environ.get("PACKETPROOF_LIB_SCENARIOS", "").split()
        for name, (kind, _, _, on, off) in SCENARIOS.items():
            if only and name not in only:
                continue
            python = os.environ.get(f"PACKETPROOF_LIB_PYTHON_{kind.upper()}", sys.executable)
            for mode in MODES:
                env = on if mode != "no-content" else off
                if env is None:
                    continue  # the library has no switch that leaves the content out
                result = subprocess.run([python, __file__, PORT, BODIES, OUT, name, mode], env={**os.environ, **env})
                print(f"{name} {mode}: exit {result.returncode}", file=sys.stderr)
