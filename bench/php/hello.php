<?php
// bench/run, PHP section: the smallest PHP request. No cache headers:
// ramjet must not cache it (it measures the PHP path).
echo "Hello, World!";
