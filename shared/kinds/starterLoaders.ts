import { provideStarterLoaders, type StarterLoaders } from './starters';

/**
 * Each kind's starter (its SDK adapter, `starter.ts`), loaded on first use. Importing this module puts every kind's SDK
 * client in the bundle of the function that does: the acquirer, releaser, reconciler and callbacks functions (each may
 * start, check or stop a run of any kind) and the `sluice` command. The jobSets function only sends job messages and
 * does not import it (test/component/package/template.test.ts reads each bundle's inputs). Adding a kind: one line here.
 */
export const STARTER_LOADERS: StarterLoaders = {
  appflow: async (options) => (await import('./appflow/starter')).createStarter(options),
  glue: async () => (await import('./glue/starter')).createStarter(),
  sfn: async () => (await import('./sfn/starter')).createStarter(),
  ecs: async () => (await import('./ecs/starter')).createStarter(),
  batch: async () => (await import('./batch/starter')).createStarter(),
  callback: async () => (await import('./callback/starter')).createStarter(),
};

provideStarterLoaders(STARTER_LOADERS);
