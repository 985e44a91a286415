//! Every instrumentation family `trace` reads, one entry each: how its records are known
//! (their scope, else an attribute prefix), what it writes where (the messages' shape,
//! the model and the max tokens), the switch that turns its content capture on, and the
//! recordings that prove it. The readers take the library of a record and its content
//! hint from here; `tests/trace_recordings.rs` replays every recording named here (an
//! entry without one fails) and checks the production table of `docs/production.md`
//! against every entry. Adding a library is one entry here and its recordings.

/// Which instrumentation made a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// opentelemetry-python-contrib's GenAI instrumentations (openai-v2, google-genai, …).
    ContribPython,
    /// @opentelemetry/instrumentation-openai.
    ContribNode,
    /// OpenLLMetry (traceloop), Python and Node.
    OpenLlmetry,
    /// The anthropic SDK's own spans.
    AnthropicSdk,
    OpenInference,
    Logfire,
    LiteLlm,
    Langfuse,
    Vercel,
    OpenLit,
    SemanticKernel,
    PydanticAi,
    Mlflow,
}

/// One instrumentation family: see the module's documentation.
#[derive(Debug)]
pub struct Family {
    pub library: Library,
    /// Its name in the docs' table.
    pub name: &'static str,
    /// The versions recorded.
    pub versions: &'static str,
    /// Scope names that are its records (a record whose scope contains one).
    pub scopes: &'static [&'static str],
    /// Attribute-name prefixes that are its records when no scope says.
    pub keys: &'static [&'static str],
    /// Where its input messages are, and their shape.
    pub messages: &'static str,
    /// Where the request's model and max tokens are.
    pub model: &'static str,
    pub max_tokens: &'static str,
    /// The setting that turns content capture on (as the hint names it).
    pub switch: &'static str,
    /// The hint on a call recorded without content.
    pub hint: &'static str,
    /// Its recordings, under tests/recordings/traces/: a stem whose `.exact` call is
    /// matched, `.drift` unreviewed and `.no-content` not judgeable (the switch named), or
    /// one of the official instrumentations' five-call files.
    pub recordings: &'static [&'static str],
}

const SEMCONV_MODEL: &str = "gen_ai.request.model";
const SEMCONV_MAX: &str = "gen_ai.request.max_tokens";

/// In the order a record's scope is matched (a longer scope name before its prefix).
pub const FAMILIES: &[Family] = &[
    Family {
        library: Library::OpenInference,
        name: "OpenInference",
        versions: "openinference-instrumentation-openai 0.1.66; @arizeai/openinference-instrumentation-openai 4.2.7",
        scopes: &["openinference"],
        keys: &["llm."],
        messages: "llm.input_messages.{i}.message.*",
        model: "llm.invocation_parameters model",
        max_tokens: "llm.invocation_parameters",
        switch: "OPENINFERENCE_HIDE_INPUTS",
        hint: "OpenInference (Python and JS): unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_INPUT_MESSAGES (or set them to false)",
        recordings: &["libraries/openinference-openai", "libraries/openinference-js-openai"],
    },
    Family {
        library: Library::OpenLit,
        name: "OpenLIT",
        versions: "openlit 1.45.0",
        scopes: &["openlit"],
        keys: &[],
        messages: "gen_ai.system_instructions + gen_ai.input.messages (the system text in both: counted once); a details log event without ids, joined by time",
        model: SEMCONV_MODEL,
        max_tokens: "not recorded for max_completion_tokens",
        switch: "capture_message_content=True",
        hint: "OpenLIT: openlit.init(capture_message_content=True) (OPENLIT_CAPTURE_MESSAGE_CONTENT=true)",
        recordings: &["families/openlit-openai"],
    },
    Family {
        library: Library::OpenLlmetry,
        name: "OpenLLMetry",
        versions: "opentelemetry-instrumentation-openai 0.62.4; opentelemetry-instrumentation-anthropic 0.62.4",
        scopes: &["traceloop", "opentelemetry.instrumentation.openai.v1", "opentelemetry.instrumentation.anthropic"],
        keys: &[],
        messages: "gen_ai.input.messages; events mode: gen_ai.*.message log events (without ids for anthropic: joined by time)",
        model: "gen_ai.request.model (anthropic events mode: on the anthropic SDK's own span)",
        max_tokens: SEMCONV_MAX,
        switch: "TRACELOOP_TRACE_CONTENT=true",
        hint: "OpenLLMetry (traceloop-sdk, @traceloop/node-server-sdk, opentelemetry-instrumentation-*): set TRACELOOP_TRACE_CONTENT=true \
               (traceContent: true in Node); with use_attributes=False the messages are log events: give the logs export too",
        recordings: &[
            "anthropic",
            "libraries/openllmetry-openai.attributes",
            "libraries/openllmetry-openai.events",
            "families/openllmetry-anthropic.events",
        ],
    },
    Family {
        library: Library::ContribPython,
        name: "opentelemetry-python-contrib GenAI",
        versions: "opentelemetry-instrumentation-openai-v2 2.4b0; opentelemetry-instrumentation-google-genai 1.3b0",
        scopes: &["opentelemetry.instrumentation."],
        keys: &[],
        messages: "gen_ai.system_instructions + gen_ai.input.messages (span, or the details log event)",
        model: SEMCONV_MODEL,
        max_tokens: SEMCONV_MAX,
        switch: "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY",
        hint: "opentelemetry-python-contrib GenAI instrumentation: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY \
               with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (EVENT_ONLY puts the content in the logs export: give that file too)",
        recordings: &["openai-v2", "google-genai"],
    },
    Family {
        library: Library::ContribNode,
        name: "@opentelemetry/instrumentation-openai",
        versions: "0.21.0",
        scopes: &["@opentelemetry/instrumentation-"],
        keys: &[],
        messages: "gen_ai.*.message log events; Responses: the details log event",
        model: SEMCONV_MODEL,
        max_tokens: SEMCONV_MAX,
        switch: "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true",
        hint: "@opentelemetry/instrumentation-openai (Node): set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; the messages \
               are log events: give the logs export too",
        recordings: &["libraries/node-openai.chat", "libraries/node-openai.responses"],
    },
    Family {
        library: Library::AnthropicSdk,
        name: "anthropic SDK spans",
        versions: "anthropic 2.15, 2.16",
        scopes: &["anthropic"],
        keys: &[],
        messages: "gen_ai.system_instructions + gen_ai.input.messages",
        model: SEMCONV_MODEL,
        max_tokens: SEMCONV_MAX,
        switch: "ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content",
        hint: "the anthropic SDK's own spans: set ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content",
        recordings: &["anthropic-sdk"],
    },
    Family {
        library: Library::Logfire,
        name: "Logfire",
        versions: "logfire 5.4.0",
        scopes: &["logfire"],
        keys: &["logfire."],
        messages: "GenAI conventions (semconv 2); version=1: request_data",
        model: "gen_ai.request.model; request_data.model",
        max_tokens: "gen_ai.request.max_tokens; request_data",
        switch: "scrubbing",
        hint: "Logfire: instrument the client with logfire.instrument_openai() / instrument_anthropic() and keep scrubbing from \
               removing the messages (logfire.configure(scrubbing=...))",
        recordings: &["libraries/logfire", "libraries/logfire-v1"],
    },
    Family {
        library: Library::LiteLlm,
        name: "LiteLLM",
        versions: "litellm 1.110.2",
        scopes: &["litellm"],
        keys: &[],
        messages: "GenAI conventions (plain-text gen_ai.system_instructions for responses)",
        model: SEMCONV_MODEL,
        max_tokens: SEMCONV_MAX,
        switch: "litellm.turn_off_message_logging = False",
        hint: "LiteLLM's OpenTelemetry callback: set litellm.turn_off_message_logging = False",
        recordings: &["libraries/litellm", "libraries/litellm-responses"],
    },
    Family {
        library: Library::Langfuse,
        name: "Langfuse",
        versions: "langfuse 5.2.0",
        scopes: &["langfuse"],
        keys: &["langfuse."],
        messages: "langfuse.observation.input",
        model: "not compared (the response's)",
        max_tokens: "langfuse.observation.model.parameters",
        switch: "input capture",
        hint: "Langfuse: record the generation's input (no mask function, LANGFUSE_... input capture on in langfuse.openai)",
        recordings: &["libraries/langfuse-openai"],
    },
    Family {
        library: Library::SemanticKernel,
        name: "Semantic Kernel",
        versions: "semantic-kernel 1.45.0",
        scopes: &["semantic_kernel"],
        keys: &[],
        messages: "gen_ai.*.message log records (Python logging bridged to OpenTelemetry) whose body is the JSON string {role, content}",
        model: SEMCONV_MODEL,
        max_tokens: "not recorded for max_completion_tokens",
        switch: "SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true",
        hint: "Semantic Kernel: set SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true and bridge its Python \
               logging to OpenTelemetry (the messages are log records: give the logs export too)",
        recordings: &["families/semantic-kernel-openai"],
    },
    Family {
        library: Library::PydanticAi,
        name: "pydantic-ai",
        versions: "pydantic-ai-slim 2.68.0 (data format 5)",
        scopes: &["pydantic-ai"],
        keys: &[],
        messages: "gen_ai.input.messages on the chat span (include_content=False keeps the parts without their content)",
        model: SEMCONV_MODEL,
        max_tokens: SEMCONV_MAX,
        switch: "InstrumentationSettings(include_content=True)",
        hint: "pydantic-ai: instrument with InstrumentationSettings(include_content=True) (Agent.instrument_all or the agent's \
               instrumentation)",
        recordings: &["families/pydantic-ai-openai"],
    },
    Family {
        library: Library::Mlflow,
        name: "MLflow tracing",
        versions: "mlflow-tracing 3.17.2",
        scopes: &["mlflow"],
        keys: &["mlflow."],
        messages: "mlflow.spanInputs (the request) on a CHAT_MODEL or LLM span; MLFLOW_ENABLE_OTEL_GENAI_SEMCONV=true: GenAI conventions",
        model: "mlflow.spanInputs model; the model attribute (its gen_ai.request.model is the response's)",
        max_tokens: "mlflow.spanInputs; the max_tokens / max_completion_tokens attribute",
        switch: "none (MLflow always records the span's inputs)",
        hint: "MLflow tracing records a span's inputs always: this span has none (was it recorded by mlflow.openai.autolog()?)",
        recordings: &["families/mlflow-openai", "families/mlflow-openai.genai-semconv"],
    },
    Family {
        library: Library::Vercel,
        name: "Vercel AI SDK",
        versions: "ai 6.0.326 with @ai-sdk/openai 3.0.141",
        scopes: &[],
        keys: &["ai."],
        messages: "ai.prompt.messages on the inner span",
        model: "ai.model.id",
        max_tokens: "ai.settings.maxOutputTokens",
        switch: "recordInputs: true",
        hint: "Vercel AI SDK: pass experimental_telemetry: { isEnabled: true, recordInputs: true }",
        recordings: &["libraries/vercel-ai"],
    },
];

impl Library {
    /// Its entry in [`FAMILIES`].
    pub fn family(self) -> &'static Family {
        FAMILIES.iter().find(|f| f.library == self).expect("every library has an entry")
    }

    /// The setting that turns content capture on, as a sentence.
    pub(crate) fn hint(self) -> &'static str {
        self.family().hint
    }

    /// The library of a record: by its scope, else by its attributes' names.
    pub(crate) fn of(scope: &str, attributes: &crate::trace::record::Attributes) -> Option<Library> {
        if scope == "ai" {
            return Some(Library::Vercel);
        }
        let by_scope = FAMILIES.iter().find(|f| f.scopes.iter().any(|s| scope.contains(s)));
        if let Some(family) = by_scope {
            return Some(family.library);
        }
        attributes.iter().find_map(|(key, _)| {
            FAMILIES.iter().find(|f| f.keys.iter().any(|prefix| key.starts_with(prefix))).map(|f| f.library)
        })
    }
}
