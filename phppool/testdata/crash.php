<?php
// Dies by SIGSEGV mid-request. With ?after=1 it first sends output and
// gives the client time to read it: death resets the connection, which
// may discard data the client has not read yet. flush() is a no-op in
// php-cgi without PHP_FCGI_CHILDREN, so the output is large enough to
// overflow its FastCGI buffer instead.
if (isset($_GET['after'])) {
    echo str_repeat('x', 100000);
    usleep(200000);
}
posix_kill(getmypid(), 11);
sleep(5);
