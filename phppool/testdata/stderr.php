<?php
// Writes to the FastCGI stderr stream.
error_log('hello from php stderr');
echo getmypid(), ' ok';
