#!/usr/bin/env python3
"""Send jobs to Sluice's job queue from Python with boto3.

    JOB_QUEUE_URL=https://sqs.eu-west-1.amazonaws.com/123456789012/sluice-prod-jobs \
        python3 producer.py jobs.jsonl

jobs.jsonl holds one job spec per line (a JSON object, as in `sluice enqueue`). Give each job an `id`: it is the
idempotency key, so sending the same job twice runs it once. Each spec is checked against the job message schema
(docs/job-message.schema.json, or `sluice schema`) before anything is sent when the `jsonschema` package is installed,
so a bad spec is refused here instead of landing in the dead-letter queue. Credentials, region and endpoint come from
boto3's usual configuration (AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL_SQS: the local stack's .sluice/local.env sets
them, and SLUICE_QUEUE_URL, which this script also reads).

Exit status: 0 when every job was sent, 1 when a spec was refused or a send failed (each named on stderr).
"""

import json
import os
import sys

import boto3
from botocore.exceptions import BotoCoreError, ClientError

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "job-message.schema.json")
BATCH = 10  # SendMessageBatch takes at most 10 entries


def load_validators():
    """A validator per job kind, or None when jsonschema is not installed (the acquirer still checks every message)."""
    try:
        import jsonschema
    except ImportError:
        return None
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    defs = {"$defs": schema["$defs"]} if "$defs" in schema else {}
    return {v["properties"]["kind"]["const"]: jsonschema.Draft202012Validator({**v, **defs}) for v in schema["oneOf"]}


def refusals(validators, spec):
    """Why the spec is not a job message ([] when it is), checked against its own kind's schema."""
    if validators is None:
        return []
    if not isinstance(spec, dict):
        return ["a job spec is a JSON object"]
    validator = validators.get(spec.get("kind"))
    if validator is None:
        return [f"kind must be one of {', '.join(sorted(validators))}"]
    return [f"{'.'.join(map(str, e.absolute_path)) or '(spec)'}: {e.message}" for e in validator.iter_errors(spec)]


def send_jobs(specs, queue_url, sqs=None):
    """Sends the specs, 10 per request. Returns the ids sent and the (id, reason) of those that failed."""
    # boto3 reads AWS_DEFAULT_REGION; the AWS SDKs for other languages (and the local stack's file) set AWS_REGION.
    sqs = sqs or boto3.client("sqs", region_name=os.environ.get("AWS_REGION") or None)
    sent, failed = [], []
    for start in range(0, len(specs), BATCH):
        chunk = specs[start : start + BATCH]
        entries = [{"Id": str(i), "MessageBody": json.dumps(spec, separators=(",", ":"))} for i, spec in enumerate(chunk)]
        answer = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        for ok in answer.get("Successful", []):
            sent.append(chunk[int(ok["Id"])].get("id"))
        for bad in answer.get("Failed", []):
            failed.append((chunk[int(bad["Id"])].get("id"), f"{bad.get('Code')}: {bad.get('Message')}"))
    return sent, failed


def main(argv):
    if len(argv) != 2:
        print("usage: producer.py JOBS.jsonl (one job spec per line)", file=sys.stderr)
        return 2
    queue_url = os.environ.get("JOB_QUEUE_URL") or os.environ.get("SLUICE_QUEUE_URL")
    if not queue_url:
        print("set JOB_QUEUE_URL to the job queue's URL (the stack's JobQueueUrl output)", file=sys.stderr)
        return 2
    validators = load_validators()
    specs, refused = [], []
    with open(argv[1], encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                spec = json.loads(line)
            except json.JSONDecodeError as error:
                refused.append(f"line {number}: not JSON: {error}")
                continue
            reasons = refusals(validators, spec)
            if reasons:
                refused.append(f"line {number} ({spec.get('id', 'no id') if isinstance(spec, dict) else 'not an object'}): {'; '.join(reasons)}")
            else:
                specs.append(spec)
    for reason in refused:
        print(f"refused {reason}", file=sys.stderr)
    try:
        sent, failed = send_jobs(specs, queue_url) if specs else ([], [])
    except (BotoCoreError, ClientError) as error:
        print(f"could not send to {queue_url}: {error}", file=sys.stderr)
        return 1
    for job_id, reason in failed:
        print(f"not sent {job_id}: {reason}", file=sys.stderr)
    print(f"sent {len(sent)} jobs" + (f": {', '.join(str(i) for i in sent)}" if sent else ""))
    return 1 if refused or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
