#!/bin/sh
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.sh"
train_agent --vec-env subproc
