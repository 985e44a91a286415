//! Every instrumentation family `trace` reads, one entry each: how its records are known
//! (their scope, else an attribute prefix), what it writes where (the messages' shape,
//! the model and the max tokens), the switch that turns its content capture on, and the
//! recordings that prove it. The readers take the library of a record and its content
//! hint from here; `tests/trace_recordings.rs` replays every recording named here (an
//! entry without one fails) and checks the production table of `docs/production.md`
//! against every entry. Adding a library is one entry here and its recordings.
//!
//! Where a family writes what no shared convention reader finds is declared in its entry
//! ([`Declared`]: which records are its model calls, where their text lives and in what
//! shape, what it never records, how it marks a cut text) and read by one generic reader
//! (`conventions::declared`): a family whose shapes exist is one entry; a new shape is one
//! [`Shape`] and its reading.

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
    LangSmith,
    Haystack,
    Strands,
    /// opentelemetry-python-contrib's openai-agents-v2 instrumentation.
    OpenAiAgents,
}

/// Where a family writes a call's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// An attribute of the call's record.
    Attribute(&'static str),
    /// A member of an attribute holding a JSON object (a JSON text or structured).
    Member(&'static str, &'static str),
}

/// The shape of what is written there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A request body, or an object of a component's inputs, as JSON: chat `messages`, a
    /// Responses `instructions` with `input`, an Anthropic `system` with `messages`, or a
    /// bare list of messages; with the model and max tokens it names. `{}` is the input
    /// withheld.
    Request,
    /// The system text alone (text or a list of text parts): the call's first message,
    /// before the messages read elsewhere that leave it out.
    System,
    /// The request's settings as a JSON object: its max tokens (`max_tokens`,
    /// `max_completion_tokens`, `max_output_tokens` or `maxOutputTokens`; `"Infinity"` is none).
    Settings,
}

/// One place a family writes a call's text, and its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    pub at: At,
    pub shape: Shape,
}

/// A record is a model call when `key` has one of `values`, or ends with one of
/// `suffixes` (a component's class name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub key: &'static str,
    pub values: &'static [&'static str],
    pub suffixes: &'static [&'static str],
}

/// What a family's entry declares for the generic reader (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared {
    /// Its model calls, beyond those a shared reader knows (any mark).
    pub calls: &'static [Mark],
    /// Where its calls' text is, beyond what a shared reader reads.
    pub reads: &'static [Read],
    /// What it never records of a call's input, so no call of it can be matched (only
    /// its user text can be found in no packet).
    pub unrecorded: Option<&'static str>,
    /// What it appends to a text it cut short: such a text is judged only as a prefix.
    pub cut: Option<&'static str>,
}

/// An entry that declares nothing: the shared readers read it all.
pub const SHARED: Declared = Declared { calls: &[], reads: &[], unrecorded: None, cut: None };

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
    pub declared: Declared,
}

const SEMCONV_MODEL: &str = "gen_ai.request.model";
const SEMCONV_MAX: &str = "gen_ai.request.max_tokens";

/// In the order a record's scope is matched (a longer scope name before its prefix).
pub const FAMILIES: &[Family] = &[
    Family {
        library: Library::OpenInference,
        name: "OpenInference",
        versions: "openinference-instrumentation-openai 0.1.66; @arizeai/openinference-instrumentation-openai 4.2.7; \
                   @arizeai/openinference-instrumentation-anthropic 0.2.8",
        scopes: &["openinference"],
        keys: &["llm."],
        messages: "llm.input_messages.{i}.message.*; Anthropic: the system text in llm.invocation_parameters system",
        model: "llm.invocation_parameters model",
        max_tokens: "llm.invocation_parameters",
        switch: "OPENINFERENCE_HIDE_INPUTS",
        hint: "OpenInference (Python and JS): unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_INPUT_MESSAGES (or set them to false)",
        recordings: &[
            "libraries/openinference-openai",
            "libraries/openinference-js-openai",
            "libraries/openinference-js-anthropic",
        ],
        declared: Declared {
            reads: &[Read { at: At::Member("llm.invocation_parameters", "system"), shape: Shape::System }],
            ..SHARED
        },
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
        recordings: &["families/openlit-openai", "families/openlit-openai.plain"],
        // max_content_length cuts a message's text and appends this (openlit-openai.cut).
        declared: Declared { cut: Some("..."), ..SHARED },
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
        declared: SHARED,
    },
    Family {
        library: Library::OpenAiAgents,
        name: "opentelemetry-python-contrib openai-agents-v2",
        versions: "opentelemetry-instrumentation-openai-agents-v2 0.1.0 with openai-agents 0.24.0 (Responses API)",
        scopes: &["opentelemetry.instrumentation.openai_agents"],
        keys: &[],
        messages: "gen_ai.input.messages on the chat span (the agent's instructions are not recorded)",
        model: "gen_ai.request.model is the response's (never compared: no call of it is matched)",
        max_tokens: "not recorded",
        switch: "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only",
        hint: "the openai-agents-v2 instrumentation: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (no_content \
               or false leaves the messages out)",
        recordings: &["families/openai-agents-v2.responses"],
        declared: Declared {
            unrecorded: Some(
                "the openai-agents-v2 instrumentation does not record the agent's instructions (the request's system \
                 prompt): a call of it cannot be matched to a packet",
            ),
            ..SHARED
        },
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
        declared: SHARED,
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
        declared: SHARED,
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
        declared: SHARED,
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
        declared: SHARED,
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
        declared: SHARED,
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
        // langfuse.observation.model.name is the response's model (langfuse 5.2 writes it
        // over the request's): not read.
        declared: Declared {
            calls: &[Mark { key: "langfuse.observation.type", values: &["generation"], suffixes: &[] }],
            reads: &[
                Read { at: At::Attribute("langfuse.observation.model.parameters"), shape: Shape::Settings },
                Read { at: At::Attribute("langfuse.observation.input"), shape: Shape::Request },
            ],
            ..SHARED
        },
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
        declared: SHARED,
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
        declared: SHARED,
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
        declared: SHARED,
    },
    Family {
        library: Library::LangSmith,
        name: "LangSmith (OpenTelemetry mode)",
        versions: "langsmith 0.15.1 (wrap_openai, LANGSMITH_TRACING_MODE=otel)",
        scopes: &["langsmith"],
        keys: &["langsmith."],
        messages: "gen_ai.prompt: the request as JSON ({} when inputs are hidden)",
        model: SEMCONV_MODEL,
        max_tokens: "gen_ai.prompt",
        switch: "LANGSMITH_HIDE_INPUTS unset",
        hint: "LangSmith: leave LANGSMITH_HIDE_INPUTS unset (or false) and give no hide_inputs to the client",
        recordings: &["families/langsmith-openai"],
        declared: Declared {
            calls: &[Mark { key: "langsmith.span.kind", values: &["llm"], suffixes: &[] }],
            reads: &[Read { at: At::Attribute("gen_ai.prompt"), shape: Shape::Request }],
            ..SHARED
        },
    },
    Family {
        library: Library::Haystack,
        name: "Haystack",
        versions: "haystack-ai 3.4.1 with opentelemetry-haystack 2.0.0",
        scopes: &["haystack"],
        keys: &["haystack."],
        messages: "haystack.component.input ({messages}) on a generator's haystack.component.run span; the pipeline span is context",
        model: "not recorded",
        max_tokens: "haystack.component.input generation_kwargs, when given at run time",
        switch: "HAYSTACK_CONTENT_TRACING_ENABLED=true",
        hint: "Haystack: set HAYSTACK_CONTENT_TRACING_ENABLED=true (or tracing.tracer.is_content_tracing_enabled = True)",
        recordings: &["families/haystack-openai"],
        declared: Declared {
            calls: &[Mark { key: "haystack.component.type", values: &[], suffixes: &["ChatGenerator", "Generator"] }],
            reads: &[Read { at: At::Attribute("haystack.component.input"), shape: Shape::Request }],
            ..SHARED
        },
    },
    Family {
        library: Library::Strands,
        name: "Strands Agents",
        versions: "strands-agents 1.62.0",
        scopes: &["strands.telemetry"],
        keys: &[],
        messages: "the chat span's details events, split (system instructions, input messages: joined); legacy: \
                   gen_ai.*.message span events; agent and loop-cycle spans are context",
        model: SEMCONV_MODEL,
        max_tokens: "not recorded",
        switch: "OTEL_SEMCONV_STABILITY_OPT_IN without gen_ai_unredacted_attributes",
        hint: "Strands Agents: leave gen_ai_unredacted_attributes= out of OTEL_SEMCONV_STABILITY_OPT_IN (or list \
               gen_ai.input.messages and gen_ai.system_instructions in it): it records [REDACTED] instead of the text",
        recordings: &["families/strands-openai", "families/strands-openai.legacy"],
        declared: SHARED,
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
        declared: SHARED,
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
}

/// The family of `families` that made a record: by its scope, else by its attributes' names.
pub(crate) fn family_of<'f>(
    families: &'f [Family],
    scope: &str,
    attributes: &crate::trace::record::Attributes,
) -> Option<&'f Family> {
    if scope == "ai" {
        return families.iter().find(|f| f.library == Library::Vercel);
    }
    let by_scope = families.iter().find(|f| f.scopes.iter().any(|s| scope.contains(s)));
    by_scope.or_else(|| {
        attributes
            .iter()
            .find_map(|(key, _)| families.iter().find(|f| f.keys.iter().any(|prefix| key.starts_with(prefix))))
    })
}
