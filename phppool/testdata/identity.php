<?php
// Who the worker is: uid, gid, its capability sets and whether ramjet's
// secret environment variable reached it (getenv or $_SERVER).
echo 'uid ', posix_getuid(), "\n";
echo 'gid ', posix_getgid(), "\n";
foreach (file('/proc/self/status') as $line) {
    if (strncmp($line, 'Cap', 3) === 0) {
        echo $line;
    }
}
echo 'getenv ', var_export(getenv('RAMJET_TEST_SECRET'), true), "\n";
echo 'server ', var_export($_SERVER['RAMJET_TEST_SECRET'] ?? null, true), "\n";
echo 'app ', var_export(getenv('APP_ENV'), true), "\n";
echo 'passed ', var_export(getenv('RAMJET_PASSED'), true), "\n";
