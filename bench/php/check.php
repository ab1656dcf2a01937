<?php
// bench/run, PHP section: not measured. Reports the SAPI, opcache state and
// every php.ini setting, so the script can check that php-cgi (ramjet) and
// php-fpm run with the same settings.
header('Content-Type: text/plain');
$st = function_exists('opcache_get_status') ? opcache_get_status(false) : false;
echo "sapi=", PHP_SAPI, "\n";
echo "version=", PHP_VERSION, "\n";
echo "opcache=", ($st && !empty($st['opcache_enabled'])) ? "on" : "off", "\n";
echo "jit=", ($st && !empty($st['jit']['on'])) ? "on" : "off", "\n";
echo "ini_file=", php_ini_loaded_file(), "\n";
echo "user=", function_exists('posix_geteuid') ? posix_getpwuid(posix_geteuid())['name'] : '?', "\n";
$ini = ini_get_all(null, false);
ksort($ini);
foreach ($ini as $k => $v) {
	echo "ini:", $k, "=", var_export($v, true), "\n";
}
