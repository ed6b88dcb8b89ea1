// OpenTelemetry traces of a run (docs/cost.md), exported over OTLP/HTTP to the endpoint of the
// standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*: the
// exporter and the SDK read them). Imported only when tracing is on (src/features/telemetry/enabled.ts).
//
// Spans: sop.run -> sop.state (one per visit) -> sop.turn -> "chat MODEL" (an LLM call, GenAI
// semantic conventions), and sop.executor (a command's executor) and sop.summary (a summary
// refresh) within them. The run's events shape the run, state, turn and executor spans; the LLM
// calls are timed by a run plugin wrapping the provider. With `content`, the prompt and the reply
// are span events, with the run's secrets redacted.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { WrappedProvider } from '../../core/llm/wrapped.js';
import type { RunEvent, RunListener } from '../../core/runtime/events.js';
import type { PluginFactory } from '../../core/runtime/hooks.js';
import type { Redactor } from '../../shared/util/redact.js';

export interface TracingOptions {
  /** Prompt and completion text as span events (--trace-content). */
  content?: boolean;
  /** The run's secrets out of span text. */
  redact: Redactor;
  /** service.version */
  version?: string;
}

export interface RunTracing {
  /** Makes the run, state, turn and executor spans from the run's events. */
  listener: RunListener;
  /** Times each LLM call as a span (and a summary refresh around it). */
  plugins: PluginFactory;
  /** Ends open spans and sends everything (run end, Ctrl-C). */
  flush(): Promise<void>;
}

const within = (parent: Span | undefined) => (parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT);

export function startTracing(o: TracingOptions): RunTracing {
  const fromEnv = detectResources({ detectors: [envDetector] });
  const resource = resourceFromAttributes({
    'service.name': process.env.OTEL_SERVICE_NAME?.trim() || 'sop',
    ...(o.version ? { 'service.version': o.version } : {}),
  }).merge(fromEnv);
  const provider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })] });
  const tracer: Tracer = provider.getTracer('sop', o.version);

  let run: Span | undefined;
  let state: Span | undefined;
  let turn: Span | undefined;
  let executor: Span | undefined;
  let sopName = '';
  const endTurn = () => {
    executor?.end();
    executor = undefined;
    turn?.end();
    turn = undefined;
  };
  const endState = () => {
    endTurn();
    state?.end();
    state = undefined;
  };
  const start = (name: string, parent: Span | undefined, attributes: Attributes, kind = SpanKind.INTERNAL) =>
    tracer.startSpan(name, { kind, attributes }, within(parent));

  const listener: RunListener = (e: RunEvent) => {
    switch (e.type) {
      case 'run_started':
        sopName = e.sop;
        run = start(`sop.run ${e.sop}`, undefined, { 'sop.run_id': e.run_id, 'sop.name': e.sop, 'sop.seed': e.seed, 'sop.llm': e.llm });
        break;
      case 'resumed':
        run ??= start(`sop.run ${sopName}`, undefined, { 'sop.resumed_from_turn': e.from_turn });
        break;
      case 'state_entered':
        endState();
        state = start(`sop.state ${e.state}`, run, {
          'sop.state': e.state,
          'sop.turn': e.turn,
          'sop.reason': e.reason,
          ...(e.from ? { 'sop.from': e.from } : {}),
        });
        break;
      case 'speaker_chosen':
        endTurn();
        turn = start(`sop.turn ${e.turn}`, state ?? run, {
          'sop.state': e.state,
          'sop.agent': e.agent,
          'sop.role': e.role,
          'sop.turn': e.turn,
          'sop.how': e.how,
        });
        break;
      case 'checkpoint':
        endTurn();
        break;
      case 'executor_called':
        executor?.end();
        executor = start(`sop.executor ${e.executor}`, turn ?? state ?? run, {
          'sop.executor': e.executor,
          'sop.command': e.command,
          'sop.state': e.state,
          'sop.agent': e.agent,
          'sop.role': e.role,
          'sop.turn': e.turn,
        });
        break;
      case 'executor_result':
        if (executor) {
          executor.setAttribute('sop.ok', e.ok);
          if (!e.ok) executor.setStatus({ code: SpanStatusCode.ERROR, message: o.redact(e.summary) });
          executor.end();
          executor = undefined;
        }
        break;
      case 'run_finished':
        endState();
        if (run) {
          run.setAttributes({
            'sop.status': e.status,
            'sop.turns': e.turns,
            'gen_ai.usage.input_tokens': e.usage.prompt_tokens,
            'gen_ai.usage.output_tokens': e.usage.completion_tokens,
            ...(typeof e.usage.cost === 'number' ? { 'sop.cost_usd': e.usage.cost } : {}),
            ...(e.final_state ? { 'sop.final_state': e.final_state } : {}),
          });
          if (e.status === 'failed') run.setStatus({ code: SpanStatusCode.ERROR, message: o.redact(e.error ?? 'failed') });
          run.end();
          run = undefined;
        }
        break;
      default:
        break;
    }
  };

  const plugins: PluginFactory = (host) => [
    {
      name: 'tracing',
      llm: (llm) =>
        new WrappedProvider(llm, async (request, call) => {
          const m = request.meta;
          const summary =
            m.purpose === 'summary' ? start('sop.summary', state ?? run, { 'sop.state': m.state, 'sop.turn': m.turn }) : undefined;
          const span = start(
            `chat ${request.model}`,
            summary ?? executor ?? turn ?? state ?? run,
            {
              'gen_ai.operation.name': 'chat',
              'gen_ai.system': llm.id === 'openai' ? 'openai' : llm.id,
              'gen_ai.request.model': request.model,
              ...(request.temperature !== undefined ? { 'gen_ai.request.temperature': request.temperature } : {}),
              ...(request.maxTokens !== undefined ? { 'gen_ai.request.max_tokens': request.maxTokens } : {}),
              'sop.purpose': m.purpose,
              'sop.state': m.state,
              'sop.turn': m.turn,
              ...(m.agent ? { 'sop.agent': m.agent } : {}),
              ...(m.role ? { 'sop.role': m.role } : {}),
              ...(host.runId ? { 'sop.run_id': host.runId } : {}),
            },
            SpanKind.CLIENT,
          );
          if (o.content) span.addEvent('gen_ai.content.prompt', { 'gen_ai.prompt': o.redact(JSON.stringify(request.messages)) });
          try {
            const res = await call();
            span.setAttributes({
              'gen_ai.usage.input_tokens': res.usage.promptTokens,
              'gen_ai.usage.output_tokens': res.usage.completionTokens,
              ...(res.usage.cachedTokens ? { 'gen_ai.usage.cache_read.input_tokens': res.usage.cachedTokens } : {}),
              ...(res.model ? { 'gen_ai.response.model': res.model } : {}),
              ...(res.finishReason ? { 'gen_ai.response.finish_reasons': [res.finishReason] } : {}),
            });
            if (o.content) span.addEvent('gen_ai.content.completion', { 'gen_ai.completion': o.redact(res.content) });
            return res;
          } catch (err) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: o.redact((err as Error).message) });
            span.setAttribute('error.type', (err as Error).name || 'Error');
            throw err;
          } finally {
            span.end();
            summary?.end();
          }
        }),
    },
  ];

  return {
    listener,
    plugins,
    async flush() {
      endState();
      run?.end();
      run = undefined;
      await provider.forceFlush();
      await provider.shutdown();
    },
  };
}
