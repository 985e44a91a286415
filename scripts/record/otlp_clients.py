"""What the Python SDK's OTLP/HTTP exporter (opentelemetry-exporter-otlp-proto-http, protobuf)
sends for GenAI calls (scripts/record/record_otlp.sh): spans with the GenAI attributes as
opentelemetry-instrumentation-openai-v2 records them, for the OpenAI golden packet sent as is
(matched), with its user text edited (unreviewed) and without captured content (not
judgeable); the same spans gzip-compressed; and the call as a
gen_ai.client.inference.operation.details event in a logs export.

    python otlp_clients.py PORT PACKET
"""
import json
import sys
import urllib.error
import urllib.request

from genai_calls import calls
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry._logs import LogRecord
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

port, packet_file = int(sys.argv[1]), sys.argv[2]
base = f"http://127.0.0.1:{port}"
packet = json.load(open(packet_file))
resource = Resource.create({"service.name": "packetproof-recording"})


def name_next(name):
    # Only the capture server names recordings; a receiver such as `packetproof serve` answers 404.
    try:
        urllib.request.urlopen(urllib.request.Request(f"{base}/__name", data=name.encode(), method="POST")).read()
    except urllib.error.HTTPError:
        pass


CALLS = calls(packet)


def traces(name, compression):
    provider = TracerProvider(resource=resource)
    exporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces", compression=compression)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    tracer = provider.get_tracer("packetproof.recording")
    name_next(name)
    for attributes in CALLS:
        with tracer.start_as_current_span(f"chat {packet['model']}", attributes=attributes):
            pass
    provider.force_flush()
    provider.shutdown()


def logs(name):
    provider = LoggerProvider(resource=resource)
    provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(endpoint=f"{base}/v1/logs")))
    logger = provider.get_logger("packetproof.recording")
    name_next(name)
    for attributes in CALLS[:2]:
        logger.emit(LogRecord(event_name="gen_ai.client.inference.operation.details", attributes=attributes))
    provider.force_flush()
    provider.shutdown()


traces("python.traces.pb", Compression.NoCompression)
traces("python.traces.pb.gz", Compression.Gzip)
logs("python.logs.pb")
