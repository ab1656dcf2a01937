<?php
// slow.php: an uncacheable fragment that answers after sleep_ms (default 2500).
$defaults = ['name' => 'slow', 'sleep_ms' => 2500];
require __DIR__ . '/frag.php';
