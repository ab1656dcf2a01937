<?php
// fail.php: a fragment that fails with status 500.
$defaults = ['name' => 'fail', 'status' => 500];
require __DIR__ . '/frag.php';
