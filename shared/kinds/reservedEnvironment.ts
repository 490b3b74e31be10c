/**
 * Environment variables that load code or change identity in whatever a container runs: the dynamic loader's
 * (LD_PRELOAD), each runtime's options and module paths (NODE_OPTIONS, JAVA_TOOL_OPTIONS, PYTHONPATH, ...), the shell's
 * startup file (BASH_ENV), the PATH commands are found on, and the AWS SDKs' own (AWS_*: credentials, endpoints,
 * config files). An override policy's `environment: true` does not let them in: only an exact listing does
 * (shared/domain/overridePolicy.ts, `reserved`).
 */
const RESERVED = new Set([
  'BASH_ENV',
  'ENV',
  'JAVA_TOOL_OPTIONS',
  'JDK_JAVA_OPTIONS',
  '_JAVA_OPTIONS',
  'LD_AUDIT',
  'LD_LIBRARY_PATH',
  'LD_PRELOAD',
  'NODE_OPTIONS',
  'NODE_PATH',
  'PATH',
  'PERL5LIB',
  'PERL5OPT',
  'PYTHONHOME',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'RUBYLIB',
  'RUBYOPT',
]);

/** Reserved whatever its case (a look-alike in another case is refused all the same). */
export const isReservedEnvironmentName = (name: string): boolean => {
  const upper = name.toUpperCase();
  return RESERVED.has(upper) || upper.startsWith('AWS_');
};

/** The names an environment override sets, and which of them only an exact listing allows. */
export function environmentUse(environment: ReadonlyArray<{ name: string }>): { names: string[]; reserved: string[] } {
  const names = environment.map((e) => e.name);
  return { names, reserved: names.filter(isReservedEnvironmentName) };
}
