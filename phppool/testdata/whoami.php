<?php
// Who the worker runs as: uid gid supplementary-groups.
echo getmypid(), ' ', posix_getuid(), ' ', posix_getgid(), ' ', implode(',', posix_getgroups());
