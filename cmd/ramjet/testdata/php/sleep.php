<?php
usleep(1000 * (int)($_GET['ms'] ?? 0));
echo 'slept ', getmypid(), "\n";
