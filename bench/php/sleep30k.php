<?php
// bench/run, PHP section: a page that waits 5 ms (as for a database) and
// prints 30 KB (30720 bytes: 480 lines of 64 bytes).
usleep(5000);
echo str_repeat("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.\n", 480);
