<?php
// header() and http_response_code() from the script reach the client.
header('X-Custom: yes');
header('Set-Cookie: flavour=oat; Path=/');
http_response_code(418);
echo "teapot";
