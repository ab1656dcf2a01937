<?php
// priv.php: a private fragment (X-LiteSpeed-Cache-Control: private,max-age=60).
$defaults = ['cc' => 'private', 'name' => 'priv'];
require __DIR__ . '/frag.php';
