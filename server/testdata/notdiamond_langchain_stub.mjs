// A module resolve hook for the Not Diamond SDK test: the SDK imports LangChain's chat
// models at load time to call LLMs itself (create/stream), which the test does not use;
// they resolve to one module of empty classes instead of 200 MB of dependencies.
const names = ['ChatOpenAI', 'AIMessage', 'SystemMessage', 'HumanMessage', 'ChatAnthropic',
  'ChatGoogleGenerativeAI', 'ChatMistralAI', 'BaseChatModel', 'ChatCohere', 'ChatTogetherAI'];
const stub = 'data:text/javascript,' + encodeURIComponent(names.map((n) => `export class ${n} {}`).join('\n'));

export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@langchain/')) return { url: stub, shortCircuit: true };
  return next(specifier, context);
}
