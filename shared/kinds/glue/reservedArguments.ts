/**
 * Glue's own job parameters: set on a run, they replace or extend what the job runs (its script, modules, files, jars,
 * Spark configuration, role-bearing settings), so a stage allows them only by exact name, never through `true` or a
 * pattern. From "Using job parameters in AWS Glue jobs"
 * (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-programming-etl-glue-arguments.html), and Ray jobs' own
 * (https://docs.aws.amazon.com/glue/latest/dg/edit-script-ray-env-dependencies.html); any `--` name Glue adds
 * later is still refused unless the stage lists it, as every name is.
 */
export const GLUE_RESERVED_ARGUMENTS: readonly string[] = [
  '--additional-python-modules',
  '--auto-scale-within-microbatch',
  '--class',
  '--conf',
  '--continuous-log-conversionPattern',
  '--continuous-log-logGroup',
  '--continuous-log-logStreamPrefix',
  '--customer-driver-env-vars',
  '--customer-executor-env-vars',
  '--datalake-formats',
  '--disable-proxy-v2',
  '--enable-auto-scaling',
  '--enable-continuous-cloudwatch-log',
  '--enable-continuous-log-filter',
  '--enable-glue-datacatalog',
  '--enable-job-insights',
  '--enable-lakeformation-fine-grained-access',
  '--enable-metrics',
  '--enable-observability-metrics',
  '--enable-rename-algorithm-v2',
  '--enable-s3-parquet-optimized-committer',
  '--enable-spark-ui',
  '--encryption-type',
  '--executor-cores',
  '--extra-files',
  '--extra-jars',
  '--extra-py-files',
  '--job-bookmark-option',
  '--job-language',
  '--logging_configuration',
  '--pip-install',
  '--python-modules-installer-option',
  '--s3-py-modules',
  '--scriptLocation',
  '--spark-event-logs-path',
  '--TempDir',
  '--use-postgres-driver',
  '--user-jars-first',
  '--working-dir',
  '--write-shuffle-files-to-s3',
  '--write-shuffle-spills-to-s3',
];

/** Reserved whatever its case: Glue's parameter names are matched as written, a look-alike is refused all the same. */
export const isReservedGlueArgument = (name: string): boolean =>
  GLUE_RESERVED_ARGUMENTS.some((reserved) => reserved.toLowerCase() === name.toLowerCase());
