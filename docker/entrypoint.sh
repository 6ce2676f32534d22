#!/bin/sh
# Hand siselect's LLM endpoint settings from the container's environment to the
# PostgreSQL server (pg_ctlcluster reads this file, in postgresql.conf syntax), then
# start as the ProvSQL image does (PostgreSQL, then ProvSQL Studio).
set -eu
env | grep -E '^(SISELECT_LLM_[A-Z_]+|OPENAI_API_KEY|OPENAI_BASE_URL)=' \
  | sed -e "s/'/''/g" -e "s/^\([^=]*\)=\(.*\)\$/\1 = '\2'/" \
  > "/etc/postgresql/${PSQL_VERSION}/main/environment" || true
exec /bin/bash /opt/provsql/docker/demo.sh
