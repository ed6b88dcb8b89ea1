// Journal lines of a sub-flow wrap their event in `subflow` events ({type: "subflow", flow,
// event}); the prompt encoding works on the innermost event and puts the wrappers back.

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The innermost event of `subflow` wrappers, and the flow path they name. */
export function unwrap(e: Obj): { inner: Obj; flow: string } {
  let cur = e;
  const flow: string[] = [];
  for (let d = 0; d < 32 && cur.type === 'subflow' && isObj(cur.event); d++) {
    flow.push(String(cur.flow));
    cur = cur.event;
  }
  return { inner: cur, flow: flow.join('/') };
}

/** `e` with its innermost event replaced. */
export function rewrap(e: Obj, inner: Obj): Obj {
  if (e.type !== 'subflow' || !isObj(e.event)) return inner;
  return { ...e, event: rewrap(e.event, inner) };
}
