<?php
// bar.php: the LiteSpeed plugin's admin bar, a private fragment.
$defaults = ['cc' => 'private', 'name' => 'admin-bar'];
require __DIR__ . '/frag.php';
