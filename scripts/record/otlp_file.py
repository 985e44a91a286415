"""OTLP exports written to files, as the Collector's file exporter writes them: one
export request per line of OTLP/JSON (trace and span ids as hex, enums as integers,
64-bit integers as strings, json_format's own), and, when asked, the protobuf bytes
beside them ({name}.pb: the exports back to back, which protobuf reads as one).
Shared by trace_clients.py and trace_libraries.py.
"""
import base64
import json


def hexify(node):
    """OTLP/JSON's one difference from protobuf's JSON mapping here: ids are hex, not base64."""
    if isinstance(node, dict):
        for key in ("traceId", "spanId", "parentSpanId"):
            if isinstance(node.get(key), str) and node[key]:
                node[key] = base64.b64decode(node[key]).hex()
        for value in node.values():
            hexify(value)
    elif isinstance(node, list):
        for value in node:
            hexify(value)


def append_otlp_json(path, message, protobuf=False):
    """Append one export to `path` (OTLP/JSON), and with `protobuf` its bytes to the .pb beside it."""
    from google.protobuf.json_format import MessageToDict

    if protobuf:
        with open(path[: -len(".jsonl")] + ".pb", "ab") as f:
            f.write(message.SerializeToString())
    request = MessageToDict(message, use_integers_for_enums=True)
    hexify(request)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n")


def span_exporter(path, protobuf=False):
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class OtlpJsonFileExporter(SpanExporter):
        def export(self, spans):
            append_otlp_json(path, encode_spans(spans), protobuf)
            return SpanExportResult.SUCCESS

        def shutdown(self):
            pass

    return OtlpJsonFileExporter()


def log_exporter(path, protobuf=False):
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult

    class OtlpJsonLogFileExporter(LogRecordExporter):
        def export(self, batch):
            append_otlp_json(path, encode_logs(batch), protobuf)
            return LogRecordExportResult.SUCCESS

        def force_flush(self, timeout_millis=30000):
            return True

        def shutdown(self):
            pass

    return OtlpJsonLogFileExporter()
