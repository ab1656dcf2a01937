<?php
// alt.php: a public fragment used as an alt.
$defaults = ['cc' => 'public', 'name' => 'alt'];
require __DIR__ . '/frag.php';
