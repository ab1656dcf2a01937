<?php
// Kills its own worker before any output: the client must get 502.
posix_kill(getmypid(), 9);
echo "unreachable";
