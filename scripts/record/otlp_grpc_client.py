"""The Python SDK's OTLP/gRPC exporter (opentelemetry-exporter-otlp-proto-grpc) sending GenAI
spans to `packetproof serve` live: the OpenAI golden packet's call as is (matched), its user
text edited (unreviewed) and without captured content (not judgeable), once plain and once
gzip-compressed. tests/cli/serve.rs runs it where the package is installed.

    python otlp_grpc_client.py PORT PACKET
"""
import json
import sys

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from genai_calls import calls
from grpc import Compression
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

port, packet_file = int(sys.argv[1]), sys.argv[2]
packet = json.load(open(packet_file))


CALLS = calls(packet)

for compression in (Compression.NoCompression, Compression.Gzip):
    provider = TracerProvider(resource=Resource.create({"service.name": "packetproof-grpc"}))
    exporter = OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True, compression=compression)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    tracer = provider.get_tracer("packetproof.recording")
    for call in CALLS:
        with tracer.start_as_current_span(f"chat {packet['model']}", attributes=call):
            pass
    provider.force_flush()
    provider.shutdown()
