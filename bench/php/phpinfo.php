<?php
// bench/run, PHP section: a heavier page (about 80 KB of HTML built by PHP).
phpinfo();
