/**
 * The resolved serverless.yml (shared/config/serviceDefinition.ts): the local stack builds itself from it, as the
 * `sluice check` command reads a stage's settings from it.
 */
export * from '../../shared/config/serviceDefinition';
