'use strict';
/**
 * A local Serverless plugin (serverless.yml, plugins): checks the stage's own settings file, shared/config/stages/<stage>.yml
 * (or SLUICE_STAGE_CONFIG_DIR/<stage>.yml), before anything is packaged. serverless.yml reads each of its settings into
 * params.default with a fallback to Sluice's default, so a misspelt name would otherwise be ignored without a word, and
 * a map where a JSON string is expected would land in a function's environment. Each is refused here, naming the file,
 * the setting and the fix.
 */
// On Node 20 the AWS SDK inside the framework prints an 8-line notice on every deploy that its releases after January
// 2027 need Node 22; the lock file pins releases that run on Node 20 (docs/operating.md, "Node versions"). As `sluice`
// does: SLUICE_SDK_NODE_WARNING=1 lets it through.
if (!process.env.SLUICE_SDK_NODE_WARNING) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const fs = require('node:fs');
const path = require('node:path');
const { parse } = require('yaml');

/** Levenshtein distance, for "did you mean". */
function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** The problems of a stage file's settings, given the names Sluice knows (params.default). */
function stageConfigProblems(settings, known, file) {
  if (settings === null || settings === undefined) return [];
  if (typeof settings !== 'object' || Array.isArray(settings)) return [`${file}: a stage file is a map of settings (name: value)`];
  const problems = [];
  for (const [name, value] of Object.entries(settings)) {
    if (!known.includes(name)) {
      const [closest] = [...known].sort((a, b) => distance(name, a) - distance(name, b));
      const hint = closest && distance(name, closest) <= Math.max(2, Math.floor(name.length / 4)) ? ` (did you mean '${closest}'?)` : '';
      problems.push(`${file}: unknown setting '${name}'${hint}; the settings are params.default's in serverless.yml`);
    } else if (value === null || typeof value === 'object') {
      const example = value && typeof value === 'object' ? `: write it as JSON in quotes, e.g. ${name}: '${JSON.stringify(value)}'` : '';
      problems.push(`${file}: '${name}' must be a string, a number or true/false${example}`);
    }
  }
  return problems;
}

/**
 * The settings a function parses as JSON at its cold start (shared/config/settings.ts), parsed here by the same code, so
 * a value that would stop every function (`pools: '{"flows": -1}'`, an override of a kind that does not exist) is
 * refused before it is packaged. `parsers`: the settings module, loaded with tsx by the plugin.
 */
function parseProblems(settings, file, parsers) {
  const checks = {
    pools: (text) => parsers.parsePools(text),
    keyLimits: (text) => parsers.parsePools(text, 'KEY_LIMITS', 'key prefix'),
    rates: (text) => parsers.parseRates(text),
    overrides: (text) => parsers.parseOverrides(text),
  };
  const problems = [];
  for (const [name, check] of Object.entries(checks)) {
    const value = settings?.[name];
    if (value === undefined || value === null || typeof value === 'object') continue; // absent, or refused above
    try {
      check(String(value));
    } catch (error) {
      problems.push(`${file}: '${name}': ${error.message}`);
    }
  }
  return problems;
}

function loadParsers(serviceDir) {
  const { require: tsxRequire } = require('tsx/cjs/api');
  return tsxRequire(path.join(serviceDir, 'shared/config/settings.ts'), __filename);
}

function stageFile(serviceDir, stage, env = process.env) {
  const dir = env.SLUICE_STAGE_CONFIG_DIR ? path.resolve(env.SLUICE_STAGE_CONFIG_DIR) : path.join(serviceDir, 'shared/config/stages');
  return path.join(dir, `${stage}.yml`);
}

class StageConfig {
  constructor(serverless, options) {
    let said = false; // a deploy runs both hooks: the notice once
    const check = () => {
      const serviceDir = serverless.serviceDir ?? serverless.config.servicePath;
      const stage = options.stage ?? serverless.service.provider.stage ?? 'dev';
      const file = stageFile(serviceDir, stage);
      const shown = path.relative(serviceDir, file).startsWith('..') ? file : path.relative(serviceDir, file);
      if (!fs.existsSync(file)) {
        if (said) return;
        said = true;
        // Not an error (a stage may take every default), but never silent: a misspelt stage name looks the same.
        process.stderr.write(
          `Sluice: no ${shown}: stage '${stage}' is packaged with every setting at its default (serverless.yml, params.default)\n`,
        );
        return;
      }
      let settings;
      try {
        settings = parse(fs.readFileSync(file, 'utf8'));
      } catch (error) {
        throw new serverless.classes.Error(`${file}: not valid YAML: ${error.message}`);
      }
      const known = Object.keys(serverless.configurationInput.params?.default ?? {});
      const problems = stageConfigProblems(settings, known, shown);
      if (settings && typeof settings === 'object') problems.push(...parseProblems(settings, shown, loadParsers(serviceDir)));
      if (problems.length > 0) throw new serverless.classes.Error(problems.join('\n'));
    };
    this.hooks = { 'before:package:initialize': check, 'before:deploy:deploy': check };
  }
}

module.exports = StageConfig;
module.exports.stageConfigProblems = stageConfigProblems;
module.exports.parseProblems = parseProblems;
