<?php
/**
 * Tests of settings sanitising and of the status widget's metrics parsing.
 *
 * @package RamjetCache
 */

use PHPUnit\Framework\TestCase;
use Ramjet\Cache\Settings;
use Ramjet\Cache\StatusWidget;

/**
 * Settings and StatusWidget::request_counts.
 */
final class SettingsTest extends TestCase {

	public function test_sanitize_drops_bad_values() {
		$got = Settings::sanitize(
			array(
				'ttl_post'        => '-5',
				'ttl_feed'        => '120',
				'exclude_paths'   => "/cart/\r\n\n /my account/ \n/cart/",
				'admin_url'       => 'javascript:alert(1)',
				'admin_token'     => "tok en\n",
				'esi'             => 'maybe',
				'proxy'           => 'on',
				'unknown'         => 'x',
			)
		);
		$this->assertSame( 0, $got['ttl_post'] );
		$this->assertSame( 120, $got['ttl_feed'] );
		$this->assertSame( array( '/cart/', '/myaccount/' ), $got['exclude_paths'] );
		$this->assertSame( '', $got['admin_url'] );
		$this->assertSame( 'token', $got['admin_token'] );
		$this->assertSame( 'auto', $got['esi'] );
		$this->assertSame( 'on', $got['proxy'] );
		$this->assertArrayNotHasKey( 'unknown', $got );
		$this->assertSame( 'http://127.0.0.1:9090', Settings::sanitize( array( 'admin_url' => 'http://127.0.0.1:9090/' ) )['admin_url'] );
	}

	public function test_hit_ratio_counters_from_metrics() {
		$text = "# TYPE x counter\nramjet_requests_total{cache=\"hit\"} 90\nramjet_requests_total{cache=\"miss\"} 8\nramjet_requests_total{cache=\"stale\"} 2\nramjet_other 5\n";
		$got  = StatusWidget::request_counts( $text );
		$this->assertEquals( 90, $got['hit'] );
		$this->assertEquals( 8, $got['miss'] );
		$this->assertEquals( 100, array_sum( $got ) );
	}
}
