// One composer per hook rule (./hooks.ts): decide, transform, observe and state. A hook that
// fails with an unexpected error is named in the error (plugin and hook); the engine's own errors
// (EngineError) and run signals (RunSignal) pass through unchanged, as their callers expect them.
import { EngineError, isRunSignal } from '../../shared/errors.js';
import type { HookName, RunPlugin } from './hooks.js';

/** An unexpected failure inside a plugin's hook. */
export class PluginHookError extends EngineError {
  constructor(
    readonly plugin: string,
    readonly hook: HookName,
    cause: unknown,
  ) {
    super(`plugin "${plugin}" failed in ${hook}: ${cause instanceof Error ? cause.message : String(cause)}`, 'PLUGIN');
    this.name = 'PluginHookError';
  }
}

const passThrough = (err: unknown): boolean => err instanceof EngineError || isRunSignal(err);

function named(p: RunPlugin, hook: HookName, err: unknown): unknown {
  return passThrough(err) ? err : new PluginHookError(p.name, hook, err);
}

type Fn = (...args: never[]) => unknown;
type HookArgs<K extends HookName> = Parameters<Extract<RunPlugin[K], Fn>>;
type HookReturn<K extends HookName> = ReturnType<Extract<RunPlugin[K], Fn>>;

function call<K extends HookName>(p: RunPlugin, hook: K, args: HookArgs<K>): HookReturn<K> | undefined {
  const fn = p[hook] as ((...a: HookArgs<K>) => HookReturn<K>) | undefined;
  if (!fn) return undefined;
  try {
    const out = fn.apply(p, args);
    if (out instanceof Promise) return out.catch((err: unknown) => Promise.reject(named(p, hook, err))) as HookReturn<K>;
    return out;
  } catch (err) {
    throw named(p, hook, err);
  }
}

/** The plugins that have a hook: a composed call over none of them is skipped altogether. */
export function having(plugins: readonly RunPlugin[], hook: HookName): RunPlugin[] {
  return plugins.filter((p) => typeof p[hook] === 'function');
}

/** decide: the first answer that is not undefined (awaited when the hook is async). */
export function decide<K extends 'effects' | 'transit' | 'result' | 'ownStep' | 'dispatch'>(
  plugins: readonly RunPlugin[],
  hook: K,
  ...args: HookArgs<K>
): Exclude<HookReturn<K>, undefined> | undefined {
  for (const p of plugins) {
    const out = call(p, hook, args);
    if (out !== undefined) return out as Exclude<HookReturn<K>, undefined>;
  }
  return undefined;
}

/** decide, for async hooks (speak, seat). */
export async function decideAsync<K extends 'speak' | 'seat'>(
  plugins: readonly RunPlugin[],
  hook: K,
  ...args: HookArgs<K>
): Promise<Awaited<HookReturn<K>> | undefined> {
  for (const p of plugins) {
    const out = await call(p, hook, args);
    if (out !== undefined) return out;
  }
  return undefined;
}

type TransformHook = 'llm' | 'semantics' | 'toolSlots' | 'context' | 'view' | 'agentPrompt' | 'agentCall' | 'commandExecutors';

/** transform: each plugin gets the value the one before returned; the rest of the arguments are shared. */
export function transform<K extends TransformHook>(
  plugins: readonly RunPlugin[],
  hook: K,
  value: HookArgs<K>[0],
  ...rest: HookArgs<K> extends [unknown, ...infer R] ? R : never
): HookArgs<K>[0] {
  let out = value;
  for (const p of plugins) {
    if (!p[hook]) continue;
    out = call(p, hook, [out, ...rest] as unknown as HookArgs<K>) as HookArgs<K>[0];
  }
  return out;
}

/** transform, for hooks that may be async (stateCommands): each plugin gets the awaited value the one before returned. */
export async function transformAsync<K extends 'stateCommands'>(
  plugins: readonly RunPlugin[],
  hook: K,
  value: HookArgs<K>[0],
  ...rest: HookArgs<K> extends [unknown, ...infer R] ? R : never
): Promise<HookArgs<K>[0]> {
  let out = value;
  for (const p of plugins) {
    if (!p[hook]) continue;
    out = (await call(p, hook, [out, ...rest] as unknown as HookArgs<K>)) as HookArgs<K>[0];
  }
  return out;
}

type ObserveHook = 'ready' | 'beforeTurn' | 'beforeCall' | 'afterCall' | 'afterMessage' | 'close';

/** observe: every plugin is told, in order (async hooks are awaited one after the other). */
export function observe<K extends 'ready' | 'beforeCall' | 'afterCall' | 'afterMessage'>(
  plugins: readonly RunPlugin[],
  hook: K,
  ...args: HookArgs<K>
): void {
  for (const p of plugins) call(p, hook, args);
}

/** observe, for hooks that may be async (beforeTurn, close). */
export async function observeAsync<K extends ObserveHook>(plugins: readonly RunPlugin[], hook: K, ...args: HookArgs<K>): Promise<void> {
  for (const p of plugins) await Promise.resolve(call(p, hook, args));
}

/** state: the plugins with a checkpoint of their own, by name. */
export function stateful(plugins: readonly RunPlugin[]): Record<string, RunPlugin> {
  const out: Record<string, RunPlugin> = {};
  for (const p of plugins) if (p.checkpoint && p.restoreCheckpoint) out[p.name] = p;
  return out;
}
