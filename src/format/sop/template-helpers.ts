// The helpers SOP templates may call (`sop validate` refuses any other): Handlebars' own but `log`,
// and the engine's eq, inc, join and tail, as templates.ts registers them (templateHelpers() there, which
// test/template-compile-verdict.test.ts holds this list to). A file of its own so that checking a
// template does not load the Handlebars runtime.
export const CHECKED_HELPERS: readonly string[] = ['each', 'if', 'unless', 'lookup', 'with', 'eq', 'inc', 'join', 'tail'];
