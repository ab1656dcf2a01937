<?php
// declares its own length, which a HEAD request keeps.
header("Content-Length: 5");
echo "hello";
