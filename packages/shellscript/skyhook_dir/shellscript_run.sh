#!/bin/bash
# Entry point of every stage of the shellscript package: `shellscript_run.sh <stage>` runs the script
# the user put under the configMap key `<stage>.sh` (apply.sh, apply_check.sh, config.sh, ...).
# The script is sourced into this shell, so it needs neither a shebang nor an exec bit, and `$1` is
# still the stage word. `exit N` ends the step with N; otherwise the last command's status counts.
# A stage without a script has nothing to do, which is a success.
stage="${1:?usage: shellscript_run.sh <stage>}"
script="${SKYHOOK_DIR:?SKYHOOK_DIR is not set}/configmaps/${stage}.sh"
if [ ! -f "${script}" ]; then
  echo "Could not find file ${script}, was this in the configmap? Nothing to run for ${stage}."
  exit 0
fi
. "${script}"
